package bloom

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestChainEqualRuns: an == or != chain sets the bits of exactly the
// entries equal (unequal) to the event value, by match.Compare, whether
// it searches its values or hashes them, for every value of the class
// (numbers mixing ints and floats, -0, and ints without an exact
// float64).
func TestChainEqualRuns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		strs := rapid.Bool().Draw(t, "strings")
		entries := genChainEntries(t, strs)
		plain := newChain(slices.Clone(entries), 1, 1)
		hashed := newChain(entries, 1, 1)
		hashed.hashValues()
		v := genChainValue(t, strs, "probe")
		for _, op := range []match.Op{match.OpEq, match.OpNe} {
			var want uint64
			for _, e := range entries { // entry i has bit i, wherever sorting put it
				if (compareValues(e.val, v) == 0) == (op == match.OpEq) {
					want |= 1 << e.pos[0]
				}
			}
			for name, ch := range map[string]*chain{"searched": plain, "hashed": hashed} {
				got := make([]uint64, 1)
				ch.or(got, op, v)
				if got[0] != want {
					t.Fatalf("%s: %v %v over %v: %b, want %b (fkeys %v)", name, op, v, plain.vals, got[0], want, plain.fkeys != nil)
				}
			}
		}
	})
}
