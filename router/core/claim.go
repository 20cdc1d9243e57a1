package core

import (
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Claimed placement (wire.PlaceClaim): a client names, right before a
// Subscribe, an earlier subscription of its own whose filter it claims
// covers the new one. The core keeps the claim until that Subscribe and
// hands the mesh both filters; the routing table checks the claim
// (poset/rto_claim.go). Claims need no assistance settings: a false one
// costs the router its own placement, never an event.

// claimFrom records client id's claims for the Subscribe or
// SubscribeBatch starting at m.First, unless too many of its claims wait
// already.
func (a *assist) claimFrom(id ConnID, m *wire.PlaceClaim) {
	if len(a.parents[id]) >= maxClaims {
		return
	}
	if a.parents[id] == nil {
		a.parents[id] = make(map[uint64][]uint64)
	}
	a.parents[id][m.First] = m.Parents
}

// takeParents returns (and forgets) the claims made for the request
// starting at first, when they are n: a claim frame of another length
// was not made for this request and is ignored.
func (a *assist) takeParents(id ConnID, first uint64, n int) ([]uint64, bool) {
	ps, ok := a.parents[id][first]
	if ok {
		delete(a.parents[id], first)
	}
	return ps, ok && len(ps) == n
}

// placeClaimed installs sub through its claim when client id made one for
// it, the claimed parent is one of the client's subscriptions and the
// table takes claims; it reports whether it did (false: place it another
// way).
func (c *Core) placeClaimed(id ConnID, sub uint64, f match.Filter) (bool, error) {
	ps, ok := c.assist.takeParents(id, sub, 1)
	if !ok || ps[0] == 0 || !c.mesh.TakesClaims() {
		return false, nil
	}
	pf, held := c.eng.Filter(id, ps[0])
	if !held {
		return false, nil
	}
	before := c.mesh.Counters().InsertTests
	out, st, err := c.mesh.SubscribeClaimed(mesh.Client(id), sub, f, pf)
	if err != nil {
		return true, err
	}
	c.metric(TestsDone, c.mesh.Counters().InsertTests-before)
	switch {
	case st.Placed:
		c.metric(PlacedClaim, 1)
	case st.Refused:
		c.metric(RefusedClaim, 1)
	}
	c.apply(out)
	return true, nil
}

// meshBatch installs a batch in the mesh, through the client's claims
// when it made them for this batch (the engine holds the whole batch
// already, so a filter may claim one earlier in the same batch).
func (c *Core) meshBatch(in SubscribeBatch) (mesh.Output, error) {
	cl := mesh.Client(in.Conn)
	ps, ok := c.assist.takeParents(in.Conn, in.First, len(in.Filters))
	if !ok || !c.mesh.TakesClaims() {
		return c.mesh.SubscribeBatch(cl, in.First, in.Filters)
	}
	parent := func(i int) (match.Filter, bool) {
		if ps[i] == 0 {
			return match.Filter{}, false
		}
		return c.eng.Filter(in.Conn, ps[i])
	}
	before := c.mesh.Counters().InsertTests
	out, placed, refused, err := c.mesh.SubscribeBatchClaimed(cl, in.First, in.Filters, parent)
	if err != nil {
		return out, err
	}
	c.metric(TestsDone, c.mesh.Counters().InsertTests-before)
	c.metric(PlacedClaim, uint64(placed))
	c.metric(RefusedClaim, uint64(refused))
	return out, nil
}
