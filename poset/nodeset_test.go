package poset

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestNodeSetAgainstReference: random adds and removes (re-adding removed
// nodes too, and enough removals in a row to compact) keep a cached node
// set equal to a sorted reference: members, length, filters and texts in
// seq order, and no dead entry once they outnumber the live ones.
func TestNodeSetAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 7))
	nodes := make([]*node, 400)
	for i := range nodes {
		f := match.MustParse(fmt.Sprintf("k == %d", i))
		nodes[i] = &node{seq: uint64(i + 1), key: newKey(f), text: f.String()}
	}
	s := nodeSet{cached: true}
	in := map[*node]bool{}
	check := func(step int) {
		var want []*node
		for _, n := range nodes {
			if in[n] {
				want = append(want, n)
			}
		}
		if s.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, s.len(), len(want))
		}
		if s.ndead > s.n && s.ndead >= indexThreshold {
			t.Fatalf("step %d: %d dead entries for %d live", step, s.ndead, s.n)
		}
		fs, ts := s.cache()
		if !slices.Equal(s.members(), want) || len(fs) != len(want) || len(ts) != len(want) {
			t.Fatalf("step %d: members %d, filters %d, texts %d; want %d", step, len(s.members()), len(fs), len(ts), len(want))
		}
		for i, n := range want {
			if !fs[i].Equal(n.key.f) || ts[i] != n.text {
				t.Fatalf("step %d: entry %d is %s/%q, want %s", step, i, fs[i], ts[i], n.text)
			}
		}
	}
	for step := range 20_000 {
		n := nodes[r.IntN(len(nodes))]
		switch {
		case step%5000 < 400: // a run of removals: compactions
			s.remove(n)
			delete(in, n)
		case r.IntN(2) == 0:
			s.add(n)
			in[n] = true
		default:
			s.remove(n)
			delete(in, n)
		}
		if step%97 == 0 {
			check(step)
		}
	}
	check(-1)
}
