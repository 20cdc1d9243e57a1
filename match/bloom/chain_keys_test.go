package bloom

import (
	"math"
	"sort"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// genChainValue draws a value of one class, numbers mixing ints and
// floats, near 0, near 2^53 (where floats stop holding every int) and at
// the ends of the int64 range.
func genChainValue(t *rapid.T, strings bool, label string) match.Value {
	if strings {
		return match.Str(rapid.StringMatching(`[ab]{0,3}`).Draw(t, label))
	}
	base := rapid.SampledFrom([]int64{0, 1 << 53, math.MaxInt64, math.MinInt64}).Draw(t, label+" base")
	off := rapid.Int64Range(-3, 3).Draw(t, label+" offset")
	i := base + off // wraps at the int64 ends: still a valid int
	if rapid.Bool().Draw(t, label+" float") {
		f := float64(i) + rapid.SampledFrom([]float64{0, 0.5, -0.5}).Draw(t, label+" fraction")
		if f == 0 && rapid.Bool().Draw(t, label+" negative zero") {
			f = math.Copysign(0, -1)
		}
		return match.MustFloat(f)
	}
	return match.Int(i)
}

// genChainEntries draws 1 to 40 chain entries of one class (see
// genChainValue); entry i has the single bit position i.
func genChainEntries(t *rapid.T, strings bool) []chainEntry {
	n := rapid.IntRange(1, 40).Draw(t, "n")
	entries := make([]chainEntry, n)
	for i := range entries {
		entries[i] = chainEntry{val: genChainValue(t, strings, "entry"), pos: []uint32{uint32(i)}}
	}
	return entries
}

// TestChainKeysAgreeWithCompare: the plain-key searches find the same
// index as searching with match.Compare, for every value of the class.
func TestChainKeysAgreeWithCompare(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		strs := rapid.Bool().Draw(t, "strings")
		ch := newChain(genChainEntries(t, strs), 1, 1)
		v := genChainValue(t, strs, "probe")
		for _, strict := range []bool{false, true} {
			want := sort.Search(len(ch.vals), func(i int) bool {
				c := compareValues(ch.vals[i], v)
				return c > 0 || !strict && c == 0
			})
			got := ch.lower(v)
			if strict {
				got = ch.upper(v)
			}
			if got != want {
				t.Fatalf("strict %v: search for %v in %v: %d, want %d (fkeys %v)", strict, v, ch.vals, got, want, ch.fkeys != nil)
			}
		}
	})
}
