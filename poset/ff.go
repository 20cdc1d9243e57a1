package poset

import (
	"errors"
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// Pin adds fixed filters (FF): a published set of filters that stay in the
// structure as nodes even without subscriptions, so that clients can say
// which of them cover their filter and the router can start inserting
// below them. A fixed filter equal or equivalent to a present node pins
// that node. Pinning does not change what is matched or forwarded.
func (c *core) Pin(fixed []match.Filter) error {
	if _, shallow := c.alg.(shallowAlg); shallow && len(fixed) > 0 {
		return errors.New("pin: the shallow forest takes no fixed filters (use poset or forest)")
	}
	for i, f := range fixed {
		if !match.Satisfiable(f) {
			return fmt.Errorf("pin: fixed filter %d (%s) matches nothing", i, f)
		}
	}
	for _, f := range fixed {
		text := f.String()
		n := c.byText.get(text)
		if n == nil {
			u := c.newNode(f, text)
			c.newEpoch()
			if n = c.alg.place(c, u); n == nil {
				n = u
				c.register(u)
			}
		}
		n.pinned = true
		c.fixed = append(c.fixed, fixedFilter{f: f, n: n})
	}
	return nil
}

type fixedFilter struct {
	f match.Filter
	n *node
}

// Fixed returns the fixed filters in the order they were pinned: the list
// clients evaluate for FF.
func (c *core) Fixed() []match.Filter {
	out := make([]match.Filter, len(c.fixed))
	for i, x := range c.fixed {
		out[i] = x.f
	}
	return out
}

// FixedCovering is the client's side of FF: the bit vector of the fixed
// filters that cover f.
func FixedCovering(fixed []match.Filter, f match.Filter) Bits {
	b := NewBits(len(fixed))
	k := newKey(f)
	for i, x := range fixed {
		kx := newKey(x)
		if relates(&kx, &k) {
			b.Set(i)
		}
	}
	return b
}

// FFStats describes one FF insertion.
type FFStats struct {
	Claimed  int  // fixed filters claimed to cover the filter
	Disputed bool // the claims disagreed (Majority)
	Verified bool // the claims were checked with covering tests
	Fallback bool // no usable claim: the router inserted from the roots
}

// AddFF inserts subscription id using clients' claims (one Bits per client,
// as computed by FixedCovering) about which fixed filters cover f. The
// claims are combined and checked under the policy like RTO answers. The
// forest then inserts from the deepest claimed fixed filter; the poset
// finds the predecessors by descending from the claimed fixed filters and
// the successors below them, so a predecessor outside every claimed fixed
// filter's subtree gets no edge (the structure stays sound and Match exact,
// but the poset may then hold more than its Hasse diagram's roots).
func (c *core) AddFF(id match.ID, from Iface, f match.Filter, claims []Bits, policy Policy) (FFStats, error) {
	var st FFStats
	if len(claims) == 0 {
		return st, errors.New("ff: no claims")
	}
	for _, b := range claims {
		if len(b) != len(NewBits(len(c.fixed))) {
			return st, fmt.Errorf("ff: claim of %d words for %d fixed filters", len(b), len(c.fixed))
		}
	}
	if c.has(id) {
		return st, fmt.Errorf("ff: subscription %d already present", id)
	}
	if !match.Satisfiable(f) || c.byText.get(f.String()) != nil {
		return st, c.Add(id, from, f)
	}
	bits, disputed := combine(claims, len(c.fixed))
	st.Disputed = disputed
	var claimed []*node
	for i, x := range c.fixed {
		if bits.Get(i) {
			claimed = append(claimed, x.n)
		}
	}
	st.Claimed = len(claimed)
	before := c.tests
	u := c.newNode(f, f.String())
	c.newEpoch()
	if policy == Verify || policy == Majority && disputed {
		st.Verified = true
		for _, n := range claimed {
			if !c.testUp(n, u) {
				claimed = nil
				break
			}
		}
	} else {
		for _, n := range claimed {
			c.touch(n).up, n.upDone = true, true
		}
	}
	if len(claimed) == 0 {
		st.Fallback = true
		checks := c.tests - before
		_, err := c.add(id, from, f)
		c.ctr.InsertTests += checks
		return st, err
	}
	join := c.placeBelow(u, claimed)
	if join == nil {
		c.register(u)
		join = u
	}
	c.bind(entry{id: id, from: from}, f, join)
	c.subs++
	c.ctr.Inserts++
	c.ctr.InsertTests += c.tests - before
	return st, nil
}

// placeBelow inserts u knowing that the claimed nodes cover it.
func (c *core) placeBelow(u *node, claimed []*node) *node {
	if _, forest := c.alg.(forestAlg); forest {
		start := deepest(claimed)
		if c.covers(u, start) {
			return start
		}
		return c.forestPlace(u, start, true)
	}
	preds := c.posetPreds(u, claimed)
	if eq := c.equivalentPred(u, preds); eq != nil {
		return eq
	}
	c.posetLink(u, preds, c.posetSuccs(u, preds[0]))
	return nil
}

// deepest returns the node with the longest path to a root (first in seq
// order on ties).
func deepest(nodes []*node) *node {
	best, bestDepth := nodes[0], -1
	for _, n := range nodes {
		d := 0
		for m := n; !m.isRoot(); m = m.parents()[0] {
			d++
		}
		if d > bestDepth {
			best, bestDepth = n, d
		}
	}
	return best
}
