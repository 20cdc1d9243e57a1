package sbstree

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/match/bloom"
)

// TestDenseNodes grows and shrinks nodes across the bitmap thresholds
// (hundreds of filters, so the root and its children get bitmaps, then
// most deleted so they lose them) and checks, after every change, that
// each node's bitmap mirrors its children and that Match and MatchAny
// agree with a subset test over the stored filters.
func TestDenseNodes(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		const m = 256
		tr, _ := New(m)
		var stored []*bitset.BitSet
		check := func(step int) {
			t.Helper()
			checkMasks(t, tr.root, seed, step)
			for range 5 {
				e := randomFilter(r, m, 40)
				var want []uint64
				for i, s := range stored {
					if bloom.Contains(e, s) {
						want = append(want, uint64(i))
					}
				}
				got := slices.Sorted(slices.Values(tr.Match(e, nil)))
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: Match %v, want %v", seed, step, got, want)
				}
				if tr.MatchAny(e) != (len(want) > 0) {
					t.Fatalf("seed %d step %d: MatchAny %v with %d matches", seed, step, tr.MatchAny(e), len(want))
				}
			}
		}
		for step := range 600 {
			s := randomFilter(r, m, 1+r.IntN(6))
			tr.Insert(s, uint64(len(stored)))
			stored = append(stored, s)
			if step%20 == 0 {
				check(step)
			}
		}
		for i := len(stored) - 1; i >= 0; i-- { // sources are indexes: delete from the end
			if err := tr.Delete(stored[i], uint64(i)); err != nil {
				t.Fatalf("seed %d: delete %d: %v", seed, i, err)
			}
			stored = stored[:i]
			if i%20 == 0 {
				check(600 + i)
			}
		}
		if tr.Nodes() != 1 || tr.root.mask != nil {
			t.Fatalf("seed %d: emptied tree has %d nodes, root bitmap %v", seed, tr.Nodes(), tr.root.mask != nil)
		}
	}
}

// randomFilter sets n random bits of m.
func randomFilter(r *rand.Rand, m, n int) *bitset.BitSet {
	b := bitset.New(uint(m))
	for range n {
		b.Set(uint(r.IntN(m)))
	}
	return b
}

// checkMasks checks that every node with a bitmap has exactly its
// children's bits in it, and that nodes at denseMin children have one.
func checkMasks(t *testing.T, n *node, seed uint64, step int) {
	t.Helper()
	if n.mask == nil && len(n.bits) >= denseMin {
		t.Fatalf("seed %d step %d: node of %d children has no bitmap", seed, step, len(n.bits))
	}
	if n.mask != nil {
		var got []uint16
		for i, w := range n.mask {
			for b := range 64 {
				if w&(1<<b) != 0 {
					got = append(got, uint16(64*i+b))
				}
			}
		}
		if !slices.Equal(got, n.bits) {
			t.Fatalf("seed %d step %d: bitmap %v, children %v", seed, step, got, n.bits)
		}
	}
	for _, k := range n.kids {
		checkMasks(t, k, seed, step)
	}
}
