package sim

import (
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/sift-pubsub/sift/scribe"
)

// TableSample bounds how many candidates BuildStatic compares by proximity
// for one routing table slot. Slots with up to TableSample candidates get
// the nearest of them all, as Pastry's locality heuristics aim for (every
// slot of a 4,096-node, b=4 network); larger slots (row 0 with 100,000
// nodes has about 6,250 candidates per slot) get the nearest of TableSample
// random candidates, which keeps the build to seconds.
const TableSample = 1024

// BuildStatic fills every node's Pastry state from global knowledge of the
// network: the leaf set from the nodes adjacent in id order, each routing
// table slot with the nearest node (by proximity) having the slot's prefix,
// among at most TableSample random candidates, and the neighbourhood set
// with the nearest of 4|M| random nodes. No messages are sent.
//
// progress, if not nil, is called after every 10,000 nodes.
func BuildStatic(s *Sim, r *rand.Rand, progress func(done, total int)) {
	n := len(s.Nodes)
	space := s.Cfg.Space()
	sorted := make([]scribe.Addr, n)
	for i := range sorted {
		sorted[i] = scribe.Addr(i)
	}
	id := func(a scribe.Addr) scribe.ID { return s.Nodes[a].Self().ID }
	sort.Slice(sorted, func(i, j int) bool { return id(sorted[i]).Less(id(sorted[j])) })
	pos := make([]int32, n)
	for i, a := range sorted {
		pos[a] = int32(i)
	}
	// lowerBound is the index of the first node with id >= x.
	lowerBound := func(x scribe.ID) int {
		return sort.Search(n, func(i int) bool { return !id(sorted[i]).Less(x) })
	}
	half := s.Cfg.Leaf / 2
	type cand struct {
		a scribe.Addr
		d int64
	}
	var near []cand
	for a := scribe.Addr(0); int(a) < n; a++ {
		if progress != nil && a > 0 && a%10000 == 0 {
			progress(int(a), n)
		}
		node := s.Nodes[a]
		self := node.Self()
		for k := 1; k <= half && k < n; k++ {
			node.Learn(s.Nodes[sorted[(int(pos[a])+k)%n]].Self())
			node.Learn(s.Nodes[sorted[(int(pos[a])-k+n)%n]].Self())
		}
		for row := 0; row < space.Digits(); row++ {
			own := space.Digit(self.ID, row)
			lo, span := space.PrefixRange(self.ID, row, own)
			if i, j := prefixBounds(lowerBound, lo, span, n); j-i <= 1 {
				break
			}
			for col := 0; col < space.Cols(); col++ {
				if col == own {
					continue
				}
				lo, span := space.PrefixRange(self.ID, row, col)
				i, j := prefixBounds(lowerBound, lo, span, n)
				if i == j {
					continue
				}
				best, bestD := scribe.NoAddr, int64(0)
				try := func(b scribe.Addr) {
					if d := s.Net.Distance(a, b); best == scribe.NoAddr || d < bestD || d == bestD && b < best {
						best, bestD = b, d
					}
				}
				if j-i <= TableSample {
					for k := i; k < j; k++ {
						try(sorted[k])
					}
				} else {
					// Ids are random, so a window of consecutive ids at a
					// random offset is a random sample of the slot.
					off := r.IntN(j - i)
					for k := range TableSample {
						try(sorted[i+(off+k)%(j-i)])
					}
				}
				node.Learn(s.Nodes[best].Self())
			}
		}
		if m := s.Cfg.Neighbours; m > 0 && n > 1 {
			near = near[:0]
			for range 4 * m {
				if b := scribe.Addr(r.IntN(n)); b != a {
					near = append(near, cand{b, s.Net.Distance(a, b)})
				}
			}
			slices.SortFunc(near, func(x, y cand) int {
				if x.d != y.d {
					return int(x.d - y.d)
				}
				return int(x.a - y.a)
			})
			for k := 0; k < len(near) && k < m; k++ {
				node.Learn(s.Nodes[near[k].a].Self())
			}
		}
	}
}

// prefixBounds returns the index range of sorted ids in [lo, lo+span).
func prefixBounds(lowerBound func(scribe.ID) int, lo, span scribe.ID, n int) (int, int) {
	i := lowerBound(lo)
	end := lo.Add(span)
	if end == (scribe.ID{}) { // the range reaches the top of the id space
		return i, n
	}
	return i, lowerBound(end)
}

// BuildByJoins builds the overlay with Pastry's join protocol, message by
// message: node 0 starts it, then every other node in address order joins
// through the nearest (by proximity) node already in the overlay, and the
// simulation runs until quiet before the next node joins.
func BuildByJoins(s *Sim) {
	for a := 1; a < len(s.Nodes); a++ {
		boot := scribe.Addr(0)
		for b := 1; b < a; b++ {
			if s.Net.Distance(scribe.Addr(a), scribe.Addr(b)) < s.Net.Distance(scribe.Addr(a), boot) {
				boot = scribe.Addr(b)
			}
		}
		s.Do(scribe.Addr(a), func(n *scribe.Node, _ scribe.Time, out *scribe.Outbox) {
			n.JoinNetwork(s.Nodes[boot].Self(), out)
		})
		s.Run()
	}
}

// RandomIDs draws n distinct random ids of the configuration's width.
func RandomIDs(r *rand.Rand, space scribe.Space, n int) []scribe.ID {
	seen := make(map[scribe.ID]bool, n)
	ids := make([]scribe.ID, 0, n)
	for len(ids) < n {
		id := space.Random(r)
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}
