package sbstree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/match/bloom"
)

// TestDenseNodes grows and shrinks nodes across the bitmap thresholds
// (hundreds of filters, so the root and its children get bitmaps, then
// most deleted so they lose them), splitting and merging runs, and checks
// the nodes (checkNodes) and that Match and MatchAny agree with a subset
// test over the stored filters.
func TestDenseNodes(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		const m = 256
		tr, _ := New(m)
		var stored []*bitset.BitSet
		check := func(step int) {
			t.Helper()
			if n := checkNodes(t, tr.root, true, seed, step); n != tr.Nodes() {
				t.Fatalf("seed %d step %d: %d trie nodes, Nodes says %d", seed, step, n, tr.Nodes())
			}
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

// checkNodes checks that every node with a bitmap has exactly its
// children's bits in it, that nodes at denseMin children have one, and
// that runs are maximal (a node other than the root holds sources or
// branches); it returns the trie nodes under n, n included.
func checkNodes(t *testing.T, n *node, root bool, seed uint64, step int) int {
	t.Helper()
	if n.mask == nil && len(n.bits) >= denseMin {
		t.Fatalf("seed %d step %d: node of %d children has no bitmap", seed, step, len(n.bits))
	}
	if !root && n.srcs.Len() == 0 && len(n.kids) < 2 {
		t.Fatalf("seed %d step %d: node (run %v) with no sources and %d children", seed, step, n.run, len(n.kids))
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
	count := 1 + len(n.run)
	for _, k := range n.kids {
		count += checkNodes(t, k, false, seed, step)
	}
	return count
}

// TestNodesCountsPrefixes: Nodes counts the distinct prefixes of the
// stored bit lists (one trie node per bit), whatever runs compress.
func TestNodesCountsPrefixes(t *testing.T) {
	const seed = 3
	r := rand.New(rand.NewPCG(seed, 3))
	tr, _ := New(128)
	prefixes := map[string]bool{"": true}
	for range 300 {
		s := randomFilter(r, 128, 1+r.IntN(5))
		tr.Insert(s, 1)
		key := ""
		for i, ok := s.NextSet(0); ok; i, ok = s.NextSet(i + 1) {
			key += fmt.Sprintf("%d,", i)
			prefixes[key] = true
		}
	}
	if tr.Nodes() != len(prefixes) {
		t.Fatalf("seed %d: Nodes %d, %d distinct prefixes", seed, tr.Nodes(), len(prefixes))
	}
}
