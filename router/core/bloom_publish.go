package core

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Bloom forwarding's event path. The first router (where a client
// published) matches the event exactly against its links' filters, as in
// exact mode, and sends the events it forwards with their summary and
// raw bytes; inner routers decide on the summary alone and forward the
// entry unchanged, decoding the event only when they have local
// subscriptions (delivery is always exact) or the event is marked exact,
// and then only the attributes their filters name.

// bloomForward routes an event a local client published: to the links
// whose filters match it exactly, by the link table (kept in Bloom mode
// too), so that no false positive leaves the first router and events that
// go nowhere cost what they cost in exact mode; the summary is built only
// for the events forwarded, for the routers downstream. Each link gets,
// where it speaks wire.VersionBloomWitness, the witness the link table
// found: a filter of that link's the event matches, which the next router
// checks first. It returns what decided the link table's answer. The
// event's encoding is read (RawAt) only for an event that goes on, as in
// exact mode.
func (c *Core) bloomForward(pub *wire.Publish, i int) RouteDecision {
	b := c.bloom
	if b.trees.Len() == 0 || c.lt == nil {
		return DecidedNoLinks // no link forwarded a filter
	}
	ev := pub.Events[i]
	hits, decision := c.lt.Route(0, ev, 0)
	if len(hits) == 0 {
		return decision
	}
	sum := b.dict.Summarize(ev)
	c.metric(BloomSummaries, 1)
	c.rd.Metrics = append(c.rd.Metrics, Metric{Kind: BloomFill, Value: sum.Fill})
	if sum.Exact {
		c.metric(BloomSaturated, 1)
	}
	c.forwardHits(hits, wire.AppendBloomEvent(nil, sum.Exact, sum.Words, pub.RawAt(i)))
	return decision
}

// forwardHits adds a BloomPublish entry's forwards to the links of hits,
// each with its witness.
func (c *Core) forwardHits(hits []LinkHit, entry []byte) {
	for _, h := range hits {
		c.forwardEntry(h.Link, entry, h.Witness)
	}
}

// forwardEntry adds a BloomPublish entry's forward to link conn, with the
// witness w where the link speaks wire.VersionBloomWitness (the link
// writer sets or strips it per link), none where it does not.
func (c *Core) forwardEntry(conn ConnID, entry []byte, w uint64) {
	id, ok := c.linkOf[conn]
	if !ok {
		return
	}
	if c.mesh.LinkVersion(id) < wire.VersionBloomWitness {
		w = 0
	}
	c.rd.Forwards = append(c.rd.Forwards, Forward{Conn: conn, Data: entry, Witness: w})
}

// bloomPublish routes a BloomPublish batch from a link (see BloomPublish).
func (c *Core) bloomPublish(in BloomPublish) error {
	if in.Pub == nil {
		return fmt.Errorf("router core: bloom-publish from connection %d without a batch", in.Conn)
	}
	from, ok := c.linkOf[in.Conn]
	if !ok {
		return nil // went down while the batch was queued
	}
	if c.bloom == nil {
		c.refuseLink(in.Conn, fmt.Errorf("bloom-publish on a link of a router that forwards exact"))
		return nil
	}
	c.bloom.dec.Wanted = in.Wanted
	local := c.eng.Subscriptions() > 0
	var n bloomCounts
	for _, be := range in.Pub.Events {
		if err := c.routeBloomEvent(in.Conn, from, be, local, &n); err != nil {
			c.refuseLink(in.Conn, fmt.Errorf("bloom-publish: %w", err))
			return nil
		}
	}
	c.metric(Matches, uint64(n.matches))
	c.metric(BloomTreeWalks, uint64(n.walks))
	c.metric(BloomWitnessDecisions, uint64(n.witnessed))
	c.countDecisions(&n.decisions)
	c.metric(EventsIn, uint64(len(in.Pub.Events)))
	return nil
}

// bloomCounts are what one BloomPublish batch did, for the metrics.
type bloomCounts struct {
	matches   int                  // local subscriptions matched
	walks     int                  // links decided by walking their tree
	witnessed int                  // links decided by the entry's witness
	decisions [NumDecisions]uint64 // exact entries: what decided the link table
}

// routeBloomEvent delivers one entry to local clients (decoding it only
// when local says the router has subscriptions, or it is marked exact)
// and forwards it, adding what it did to n. The entry goes on with the
// witness it came with: along a chain the filter it names is held by the
// next link too.
func (c *Core) routeBloomEvent(conn ConnID, from mesh.Link, be wire.BloomEvent, local bool, n *bloomCounts) error {
	b := c.bloom
	var ev match.Event
	delivered := 0
	if be.Exact || local {
		var err error
		if ev, err = b.dec.DecodeEvent(be.Event); err != nil {
			return err
		}
		before := len(c.rd.Deliveries)
		n.matches += c.addDeliveries(c.eng.Route(conn, ev), be.Event)
		delivered = len(c.rd.Deliveries) - before
	}
	if be.Exact {
		c.rd.Metrics = append(c.rd.Metrics, Metric{Kind: BloomExactIn, Conn: conn, N: 1})
		if c.lt != nil {
			hits, decision := c.lt.Route(conn, ev, be.Witness)
			n.decisions[decision]++
			c.forwardHits(hits, be.Entry)
		}
		return nil
	}
	to, d, err := b.trees.RouteWitness(be.Summary, from, be.Witness, b.to[:0])
	if err != nil {
		return err
	}
	b.to = to
	n.walks += d.Walks
	n.witnessed += d.Witness
	if delivered == 0 && len(to) == 0 {
		c.rd.Metrics = append(c.rd.Metrics, Metric{Kind: BloomFalseForwards, Conn: conn, N: 1})
	}
	for _, id := range to {
		if out, ok := c.byLink[id]; ok {
			c.forwardEntry(out, be.Entry, be.Witness)
		}
	}
	return nil
}
