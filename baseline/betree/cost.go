package betree

import (
	"math"
	"slices"

	"github.com/sift-pubsub/sift/baseline/internal/interval"
	"github.com/sift-pubsub/sift/baseline/internal/num"
)

// minGain is the least gain, in expected subscription evaluations spared
// per event, for which a new p-node is worth its own visit.
const minGain = 1.0

// gain is the cost model's saving for one interval under a p-node of its
// attribute: 1 - (the share of the domain covered by the smallest bucket
// that will enclose it once its clustering directory is split as deep as
// the configuration allows). Kept in the l-node of a c-node, a
// subscription is evaluated for every event reaching that c-node; under
// the p-node, only for events whose value falls in its bucket, a share of
// them equal to the bucket's share of the domain when values are spread
// evenly (and none for events without the attribute, which the model
// does not count, so the gain is a lower bound).
func (x *Index) gain(iv *interval.Interval) float64 {
	lo, hi := x.cfg.Lo, x.cfg.Hi
	depth := 0
	for depth < x.cfg.MaxDepth {
		mid := lo + (hi-lo)/2
		m := num.Key{F: mid}
		switch {
		case num.Less(iv.Hi, m) || iv.Hi == m && iv.HiOpen:
			hi = mid
		case !num.Less(iv.Lo, m):
			lo = mid
		default:
			return 1 - math.Ldexp(1, -depth)
		}
		depth++
	}
	return 1 - math.Ldexp(1, -depth)
}

// gains returns the gain of each of the intervals, aligned with them.
func (x *Index) gains(ivs []interval.Interval) []float64 {
	g := make([]float64, len(ivs))
	for i := range ivs {
		g[i] = x.gain(&ivs[i])
	}
	return g
}

// bestPnode returns the p-node of n's partition directory that s should
// descend into, with s's interval on its attribute, or nil when none is
// on an attribute s constrains. The paper ranks the candidate p-nodes and
// takes the best; here the rank is s's own gain under each (the p-node
// whose clustering will spare the most evaluations of s), ties going to
// the p-node holding more subscriptions, then to the older p-node.
func (x *Index) bestPnode(n *cnode, s *sub) (*pnode, *interval.Interval) {
	var best *pnode
	var bestIv *interval.Interval
	bestGain := -1.0
	for _, p := range n.pdir {
		i := s.index(p.attr)
		if i < 0 {
			continue
		}
		g := s.gains[i]
		if g > bestGain || g == bestGain && p.count > best.count {
			best, bestIv, bestGain = p, &s.ivs[i], g
		}
	}
	return best, bestIv
}

// bestAttr returns the attribute a new p-node of n should partition on:
// of those the subscriptions of n's l-node constrain, not partitioned on
// the path from the root nor already in n's directory, the one whose
// p-node would spare the most evaluations per event (the sum of the
// subscriptions' gains; ties by name). It reports false when even the
// best spares no more than minGain.
func (x *Index) bestAttr(n *cnode) (string, bool) {
	taken := pathAttrs(n)
	for _, p := range n.pdir {
		taken = append(taken, p.attr)
	}
	sum := map[string]float64{}
	for _, s := range n.leaf {
		for i := range s.ivs {
			if a := s.ivs[i].Attr; !slices.Contains(taken, a) {
				sum[a] += s.gains[i]
			}
		}
	}
	best, bestSum := "", 0.0
	for a, g := range sum {
		if g > bestSum || g == bestSum && a < best {
			best, bestSum = a, g
		}
	}
	return best, bestSum > minGain
}
