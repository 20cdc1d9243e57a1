package client

import (
	"math/rand/v2"
	"sync"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// Claimed placement (Assist.Claim): before each Subscribe or
// SubscribeBatch the client names, for each filter, one of its own earlier
// subscriptions whose filter covers it (wire.PlaceClaim), so that the
// router places the filter below that one after a single covering test
// instead of searching its routing table. The client finds the parent in
// a shallow forest of its own subscriptions (poset.Shallow.Coverer): the
// search the router is spared is done here.

// claimer is a client's claiming state.
type claimer struct {
	mu   sync.Mutex
	own  *poset.Shallow // this connection's subscriptions, by id
	rng  *rand.Rand     // Assist.Lie only
	sent int            // claims sent (a parent named), for tests
}

// claiming reports whether this client claims placements: it was asked
// to and the router chose a version that takes claims.
func (c *Client) claiming() bool {
	a := c.opts.Assist
	return a != nil && a.Claim && c.welcome.Version >= wire.VersionClaim
}

// claimPlace sends, before a Subscribe or SubscribeBatch m, the parents
// claimed for its filters, when any is.
func (c *Client) claimPlace(m wire.Message) error {
	if !c.claiming() {
		return nil
	}
	var first uint64
	var texts []string
	switch m := m.(type) {
	case *wire.Subscribe:
		first, texts = m.ID, []string{m.Filter}
	case *wire.SubscribeBatch:
		first, texts = m.First, m.Filters
	default:
		return nil
	}
	if parents := c.claims(first, texts); parents != nil {
		return c.writeControl(&wire.PlaceClaim{First: first, Parents: parents})
	}
	return nil
}

// claims returns the parent claimed for each filter (0: none), or nil when
// none is, and adds the filters to the client's own forest. Honest claims
// name the subscription Coverer finds; lying ones (Assist.Lie) a random
// earlier id, whatever its filter.
func (c *Client) claims(first uint64, texts []string) []uint64 {
	cl := &c.claim
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.own == nil {
		cl.own = poset.NewShallow(poset.Config{})
		cl.rng = rand.New(rand.NewPCG(c.opts.Assist.LieSeed, 0xc1a))
	}
	parents := make([]uint64, len(texts))
	named := 0
	for i, text := range texts {
		id := first + uint64(i)
		f, err := match.Parse(text)
		if err != nil {
			continue // the router refuses it
		}
		switch {
		case c.opts.Assist.Lie && id > 1:
			parents[i] = 1 + cl.rng.Uint64N(id-1)
		case !c.opts.Assist.Lie:
			if p, ok := cl.own.Coverer(f); ok {
				parents[i] = uint64(p)
			}
		}
		if parents[i] != 0 {
			named++
		}
		cl.own.Add(match.ID(id), 0, f) // an id is never reused: cannot fail
	}
	if named == 0 {
		return nil
	}
	cl.sent += named
	return parents
}

// unclaim forgets subscription id in the client's own forest.
func (c *Client) unclaim(id uint64) {
	if !c.claiming() {
		return
	}
	c.claim.mu.Lock()
	defer c.claim.mu.Unlock()
	if c.claim.own != nil {
		c.claim.own.Delete(match.ID(id)) // not held (refused, or never claimed for): nothing to do
	}
}
