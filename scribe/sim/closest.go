package sim

import (
	"slices"

	"github.com/sift-pubsub/sift/scribe"
)

// ClosestLive returns the live node numerically closest to key: the root
// Pastry should deliver key to. While no node has been killed it answers
// from an index sorted by id; afterwards it scans every node.
func (s *Sim) ClosestLive(key scribe.ID) scribe.Addr {
	if s.killed == 0 {
		return s.closestIndexed(key)
	}
	best := scribe.NoAddr
	for a, n := range s.Nodes {
		if s.alive[a] && (best == scribe.NoAddr || scribe.Closer(key, n.Self().ID, s.Nodes[best].Self().ID)) {
			best = scribe.Addr(a)
		}
	}
	return best
}

func (s *Sim) closestIndexed(key scribe.ID) scribe.Addr {
	if s.byID == nil {
		s.byID = make([]scribe.Addr, len(s.Nodes))
		for i := range s.byID {
			s.byID[i] = scribe.Addr(i)
		}
		slices.SortFunc(s.byID, func(a, b scribe.Addr) int {
			x, y := s.Nodes[a].Self().ID, s.Nodes[b].Self().ID
			switch {
			case x.Less(y):
				return -1
			case y.Less(x):
				return 1
			}
			return 0
		})
	}
	n := len(s.byID)
	i, _ := slices.BinarySearchFunc(s.byID, key, func(a scribe.Addr, k scribe.ID) int {
		if s.Nodes[a].Self().ID.Less(k) {
			return -1
		}
		if k.Less(s.Nodes[a].Self().ID) {
			return 1
		}
		return 0
	})
	succ, pred := s.byID[i%n], s.byID[(i-1+n)%n]
	if scribe.Closer(key, s.Nodes[pred].Self().ID, s.Nodes[succ].Self().ID) {
		return pred
	}
	return succ
}
