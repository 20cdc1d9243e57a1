package poset

import (
	"errors"
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// Claimed placement: RTO with the client's knowledge instead of layered
// queries. The client names a parent it believes covers its new filter, by
// an id the router handed out (the client's own earlier subscription); the
// router verifies the claim with one covering test and links the filter
// below that parent, or refuses the claim and inserts the filter itself.
//
// Why it is safe in the shallow forest: every edge must be a covering and
// a node has one parent; the claimed parent is tested to cover the filter
// before the edge is made, and the new node is a leaf, so the edge closes
// no cycle and leaves the roots as they were (pairwise incomparable). An
// event matching the filter matches the parent, so Match and the routing
// table's forwarding reach the filter whenever they must: a false claim
// is caught by the test, and no claim can hide a filter. What a claim may
// cost is placement quality: the filter sits below the named parent even
// when a node deeper down covers it too, which the shallow forest allows
// (children of a node may be comparable).
//
// Why only the shallow forest: the poset's edges must be exactly the
// immediate coverings and the forest's siblings pairwise incomparable, so
// placing below a verified parent there would still need the descent and
// the sibling tests that make their inserts dear.

// ClaimStats says how a claimed placement went.
type ClaimStats struct {
	// Placed: the claimed parent covers the filter, which now sits below
	// it; the router did one covering test.
	Placed bool
	// Refused: the claim was false, or named no subscription the
	// structure holds; the router inserted the filter itself.
	Refused bool
}

// errClaimStructure reports a claim to a structure that takes none.
var errClaimStructure = errors.New("claimed placements need the shallow forest")

// AddClaimed inserts subscription id (filter f from interface from) below
// the node of subscription parent, which the caller claims covers f, after
// checking that it does. A false claim, or a parent the structure does not
// hold (unknown, or kept aside as unsatisfiable), is refused and f is
// inserted as by Add. A filter present already joins its node and an
// unsatisfiable one is kept aside, as by Add, the claim unused. It fails,
// changing nothing, when id is present or the structure is not the
// shallow forest.
func (c *core) AddClaimed(id match.ID, from Iface, f match.Filter, parent match.ID) (ClaimStats, error) {
	_, st, err := c.addClaimed(id, from, f, f.String(), c.nodeOf(parent, ""))
	return st, err
}

// addClaimed is AddClaimed with f's canonical text given and the claimed
// parent's node (nil: none held), returning the node that holds the
// subscription (nil when kept aside).
func (c *core) addClaimed(id match.ID, from Iface, f match.Filter, text string, p *node) (*node, ClaimStats, error) {
	if _, shallow := c.alg.(shallowAlg); !shallow {
		return nil, ClaimStats{}, fmt.Errorf("%s: %w", c.name, errClaimStructure)
	}
	if c.has(id) || c.byText.get(text) != nil || !match.Satisfiable(f) {
		n, err := c.addText(id, from, f, text) // the error, a join or kept aside
		return n, ClaimStats{}, err
	}
	if p == nil {
		n, err := c.addText(id, from, f, text)
		return n, ClaimStats{Refused: true}, err
	}
	before := c.tests
	defer func() { c.ctr.Inserts++; c.ctr.InsertTests += c.tests - before }()
	u := c.newNode(f, text)
	var st ClaimStats
	if mayCover(&p.key, &u.key) && c.covers(p, u) {
		addEdge(p, u)
		c.register(u)
		st.Placed = true
	} else {
		st.Refused = true
		if w := c.alg.place(c, u); w != nil {
			u = w // equivalent to a root: join it
		} else {
			c.register(u)
		}
	}
	c.bindText(entry{id: id, from: from}, f, text, u)
	c.subs++
	return u, st, nil
}

// Coverer returns a subscription whose filter covers f: one of the first
// root (in creation order) that covers it. It is how a client picks the
// parent to claim for a new filter among its own subscriptions, kept in a
// shallow forest of its own: one root query, as the router's own insert
// would cost. It changes nothing but the counters.
func (s *Shallow) Coverer(f match.Filter) (match.ID, bool) {
	if !match.Satisfiable(f) {
		return 0, false
	}
	u := &node{key: newKey(f)}
	s.sign(&u.key)
	w := s.firstCoverer(u, nil)
	if w == nil {
		return 0, false
	}
	e, ok := w.firstSub()
	return e.id, ok
}
