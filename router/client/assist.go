package client

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// Assist offers a client's CPU to its router for placing subscriptions in
// the router's routing table (docs/protocol.md, "Client-assisted
// placement"). The router uses it only when it runs a mesh with an RTO policy
// (siftd --rto) or fixed filters (siftd --ff); otherwise the offer is
// ignored. Answering costs the client covering tests on the router's
// filter vectors, on its reader goroutine.
type Assist struct {
	// RTO answers the router's RTO queries: which filters of a vector
	// cover a filter being placed, are covered by it, overlap it.
	RTO bool
	// FF claims, before each Subscribe on this connection, which of the
	// router's fixed filters cover the subscription's filter. The router
	// sends its fixed set in answer to the offer Dial makes, so a Subscribe
	// made before it arrives waits for it, up to FFWait after the first
	// such Subscribe (a router without fixed filters sends none: only
	// subscriptions made in that first second are delayed).
	FF bool
	// Claim claims, before each Subscribe and SubscribeBatch on this
	// connection, a parent for each filter: an earlier subscription of the
	// connection whose filter covers it (claim.go). The router checks the
	// claim with one covering test and places the filter below it, sparing
	// its own search of the routing table. Only with a router that speaks
	// wire.VersionClaim (others get no claims); it needs no router option.
	Claim bool
	// Lie makes every answer and claim random bits drawn from LieSeed
	// (for Claim: a random earlier subscription as the parent). It exists
	// to test a router's policies (a router under verify or majority, and
	// any router taking claims, must lose no event); never set it
	// otherwise.
	Lie     bool
	LieSeed uint64
}

// FFWait bounds how long Subscribes under Assist.FF wait for the router's
// fixed set, from the first of them.
const FFWait = time.Second

// assistant is a client's assisting state.
type assistant struct {
	mu      sync.Mutex
	gen     uint64         // the fixed set's generation; 0: none received
	fixed   []match.Filter // the router's fixed filters
	arrived chan struct{}  // FF: closed when the first fixed set arrives
	until   time.Time      // FF: when claims stop waiting for it; zero: no claim yet
	rng     *rand.Rand     // Lie only
}

// offerAssist tells the router what this client assists with.
func (c *Client) offerAssist() error {
	a := c.opts.Assist
	if a == nil || !a.RTO && !a.FF {
		return nil
	}
	if a.Lie {
		c.assist.rng = rand.New(rand.NewPCG(a.LieSeed, 0x11e))
	}
	var modes uint8
	if a.RTO {
		modes |= wire.AssistRTO
	}
	if a.FF {
		modes |= wire.AssistFF
		c.assist.mu.Lock()
		c.assist.arrived = make(chan struct{})
		c.assist.mu.Unlock()
	}
	return c.writeControl(&wire.AssistOffer{Modes: modes})
}

// assisted handles an RTOQuery (answered at once) or FFFixed (kept for
// later claims). A query whose filters do not parse is answered with
// nothing set: the router's policy copes with any answer.
func (c *Client) assisted(m wire.Message) {
	switch m := m.(type) {
	case *wire.FFFixed:
		fixed := make([]match.Filter, 0, len(m.Filters))
		for _, text := range m.Filters {
			f, err := match.Parse(text)
			if err != nil {
				return // not a set this client can claim against
			}
			fixed = append(fixed, f)
		}
		c.assist.mu.Lock()
		c.assist.gen, c.assist.fixed = m.Gen, fixed
		if a := c.assist.arrived; a != nil {
			select {
			case <-a:
			default:
				close(a)
			}
		}
		c.assist.mu.Unlock()
	case *wire.RTOQuery:
		a := c.answerRTO(m)
		go c.writeControl(&wire.RTOAnswer{Q: m.Q, Up: a.Up, Down: a.Down, Overlap: a.Overlap})
	}
}

// answerRTO computes the return vector of a query (poset.Evaluate), or
// random bits when lying.
func (c *Client) answerRTO(m *wire.RTOQuery) poset.Answer {
	n := len(m.Filters)
	if c.opts.Assist.Lie {
		return poset.Answer{Up: c.lie(n), Down: c.lie(n), Overlap: c.lie(n)}
	}
	q := poset.Query{Filters: make([]match.Filter, n)}
	var err error
	if q.Filter, err = match.Parse(m.Filter); err != nil {
		return poset.Answer{Up: poset.NewBits(n), Down: poset.NewBits(n), Overlap: poset.NewBits(n)}
	}
	for i, text := range m.Filters {
		if q.Filters[i], err = match.Parse(text); err != nil || !match.Satisfiable(q.Filters[i]) {
			return poset.Answer{Up: poset.NewBits(n), Down: poset.NewBits(n), Overlap: poset.NewBits(n)}
		}
	}
	return poset.Evaluate(q)
}

// claimFF sends, before a Subscribe, the fixed filters covering its filter
// (when this client claims and has the router's fixed set).
func (c *Client) claimFF(m wire.Message) error {
	s, ok := m.(*wire.Subscribe)
	if !ok || c.opts.Assist == nil || !c.opts.Assist.FF {
		return nil
	}
	gen, fixed := c.fixedSet()
	if gen == 0 {
		return nil // the router sent no fixed set (in time)
	}
	var claim poset.Bits
	if c.opts.Assist.Lie {
		claim = c.lie(len(fixed))
	} else if f, err := match.Parse(s.Filter); err == nil && match.Satisfiable(f) {
		claim = poset.FixedCovering(fixed, f)
	} else {
		return nil // the router refuses the filter anyway
	}
	return c.writeControl(&wire.FFClaim{Gen: gen, Sub: s.ID, Covering: claim})
}

// fixedSet returns the router's fixed set and its generation (0: none),
// waiting for it to arrive until FFWait after the first claim.
func (c *Client) fixedSet() (uint64, []match.Filter) {
	c.assist.mu.Lock()
	if c.assist.until.IsZero() {
		c.assist.until = time.Now().Add(FFWait)
	}
	arrived, until := c.assist.arrived, c.assist.until
	c.assist.mu.Unlock()
	if d := time.Until(until); arrived != nil && d > 0 {
		t := time.NewTimer(d)
		select {
		case <-arrived:
		case <-t.C:
		case <-c.done:
		}
		t.Stop()
	}
	c.assist.mu.Lock()
	defer c.assist.mu.Unlock()
	return c.assist.gen, c.assist.fixed
}

// lie draws n random bits.
func (c *Client) lie(n int) poset.Bits {
	c.assist.mu.Lock()
	defer c.assist.mu.Unlock()
	b := poset.NewBits(n)
	for i := range b {
		b[i] = c.assist.rng.Uint64()
	}
	if r := n % 64; r != 0 {
		b[len(b)-1] &= 1<<r - 1
	}
	return b
}
