package bloom

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestChainHashAgreesWithSearch: an == or != chain that hashes its values
// sets the same bits as the same chain searching them, for every value of
// the class (numbers mixing ints and floats, -0, and ints without an
// exact float64).
func TestChainHashAgreesWithSearch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		strs := rapid.Bool().Draw(t, "strings")
		n := rapid.IntRange(1, 40).Draw(t, "n")
		entries := make([]chainEntry, n)
		for i := range entries {
			entries[i] = chainEntry{val: genChainValue(t, strs, "entry"), pos: []uint32{uint32(i)}}
		}
		plain := newChain(slices.Clone(entries), 1, 1)
		hashed := newChain(entries, 1, 1)
		hashed.hashValues()
		v := genChainValue(t, strs, "probe")
		for _, op := range []match.Op{match.OpEq, match.OpNe} {
			want, got := make([]uint64, 1), make([]uint64, 1)
			plain.or(want, op, v)
			hashed.or(got, op, v)
			if got[0] != want[0] {
				t.Fatalf("%v %v over %v: hashed %b, searched %b (fkeys %v)", op, v, plain.vals, got[0], want[0], plain.fkeys != nil)
			}
		}
	})
}
