package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/scribe"
)

// newGroup creates a group named name by a random creator and returns its id.
func newGroup(s *Sim, r *rand.Rand, name string) scribe.ID {
	creator := scribe.Addr(r.IntN(len(s.Nodes)))
	key := scribe.GroupID(s.Cfg.Space(), name, fmt.Sprintf("node-%d", creator))
	s.Do(creator, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Create(now, key, out) })
	s.Run()
	return key
}

// joinAll makes members join key one at a time, each to quiescence.
func joinAll(s *Sim, key scribe.ID, members []scribe.Addr) {
	for _, m := range members {
		s.Do(m, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Join(now, key, out) })
		s.Run()
	}
}

// sample returns k distinct random nodes.
func sample(r *rand.Rand, n, k int) []scribe.Addr {
	if k > n {
		k = n
	}
	out := make([]scribe.Addr, 0, k)
	if k*4 > n {
		for _, i := range r.Perm(n)[:k] {
			out = append(out, scribe.Addr(i))
		}
		return out
	}
	seen := make(map[int]bool, k)
	for len(out) < k {
		if i := r.IntN(n); !seen[i] {
			seen[i] = true
			out = append(out, scribe.Addr(i))
		}
	}
	return out
}
