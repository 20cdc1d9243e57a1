package router

import (
	"context"
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/core"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Bloom forwarding's event path. The first router (where a client
// published) matches the event exactly against its links' filters, as in
// exact mode, and sends the events it forwards with their summary and
// raw bytes; inner routers decide on the summary alone and forward the entry
// unchanged, decoding the event only when they have local subscriptions
// (delivery is always exact) or the event is marked exact, and then only
// the attributes their filters name (wanted.go).

// bloomForward routes an event a local client published: to the links
// whose filters match it exactly, by the link table (kept in Bloom mode
// too), so that no false positive leaves the first router and events that
// go nowhere (most, on selective workloads) cost what they cost in exact
// mode; the summary is built only for the events forwarded, for the
// routers downstream. Each link gets, where it speaks
// wire.VersionBloomWitness, the witness the link table found: a filter of
// that link's the event matches, which the next router checks first. It
// returns what decided the link table's answer.
func (l *matchLoop) bloomForward(ev match.Event, raw []byte) core.RouteDecision {
	b, lt := l.bloom, l.core.LinkTable()
	if b.trees.Len() == 0 || lt == nil {
		return core.DecidedNoLinks // no link forwarded a filter
	}
	hits, decision := lt.Route(0, ev, 0)
	if len(hits) == 0 {
		return decision
	}
	sum := b.dict.Summarize(ev)
	l.metrics.Bloom.Summaries.Inc()
	l.metrics.Bloom.Fill.Observe(sum.Fill)
	if sum.Exact {
		l.metrics.Bloom.Saturated.Inc()
	}
	l.queueEntry(hits, wire.AppendBloomEvent(nil, sum.Exact, sum.Words, raw))
	return decision
}

// queueEntry queues a BloomPublish entry for the links of hits, each with
// its witness; a full queue closes the link as a slow consumer.
func (l *matchLoop) queueEntry(hits []core.LinkHit, entry []byte) {
	for _, h := range hits {
		if c, ok := l.conns[h.Link]; ok {
			l.queueLink(c, entry, c.entryWitness(h.Witness))
		}
	}
}

// bloomCounts are what one BloomPublish batch did, for the metrics.
type bloomCounts struct {
	matches   int            // local subscriptions matched
	walks     int            // links decided by walking their tree
	witnessed int            // links decided by the entry's witness
	decisions decisionCounts // exact entries: what decided the link table
}

// publishBloom handles a BloomPublish batch from a link: exact delivery
// to local clients, forwarding on the summary (or exactly, for an event
// marked exact), never back. An event forwarded on its summary that goes
// nowhere from here is a false positive of the link it came on. A batch
// whose event or summary this router cannot use closes the link.
func (l *matchLoop) publishBloom(m loopMsg) {
	c, ok := l.conns[m.iface]
	from, isLink := l.core.LinkOf(m.iface)
	if !ok || !isLink {
		return // detached while the batch was queued
	}
	lm := l.bloom.links[m.iface]
	local := l.eng.Subscriptions() > 0
	var n bloomCounts
	for _, be := range m.bpub.Events {
		if err := l.routeBloomEvent(m.iface, from, lm, be, local, m.at, &n); err != nil {
			l.refuseLink(m.iface, fmt.Errorf("bloom-publish: %w", err))
			return
		}
	}
	l.metrics.Matches.Add(float64(n.matches))
	l.metrics.Bloom.TreeWalks.Add(float64(n.walks))
	l.metrics.Bloom.WitnessDecisions.Add(float64(n.witnessed))
	l.metrics.LinkTable.add(&n.decisions)
	l.metrics.EventsIn.Add(float64(len(m.bpub.Events)))
	c.linkIn.Add(float64(len(m.bpub.Events)))
}

// routeBloomEvent delivers one entry to local clients (decoding it only
// when local says the router has subscriptions, or it is marked exact)
// and forwards it, adding what it did to n. The entry goes on with the
// witness it came with: along a chain the filter it names is held by the
// next link too.
func (l *matchLoop) routeBloomEvent(iface ifaceID, from mesh.Link, lm bloomLinkMetrics, be wire.BloomEvent, local bool, at time.Time, n *bloomCounts) error {
	b := l.bloom
	var ev match.Event
	delivered := false
	if be.Exact || local {
		var err error
		b.dec.Wanted, _ = l.want.load() // the loop's current set: what its filters name
		if ev, err = b.dec.DecodeEvent(be.Event); err != nil {
			return err
		}
		for _, h := range l.eng.Route(iface, ev) {
			n.matches += len(h.Subs)
			if c, ok := l.conns[h.Iface]; ok {
				l.deliver(c, h.Subs, be.Event, at)
				delivered = true
			}
		}
	}
	if be.Exact {
		lm.exactIn.Inc()
		if lt := l.core.LinkTable(); lt != nil {
			hits, decision := lt.Route(iface, ev, be.Witness)
			n.decisions[decision]++
			l.queueEntry(hits, be.Entry)
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
	if !delivered && len(to) == 0 {
		lm.falseForwards.Inc()
	}
	for _, id := range to {
		if c, ok := l.linkConn(id); ok {
			l.queueLink(c, be.Entry, c.entryWitness(be.Witness))
		}
	}
	return nil
}

// readLinkData reads a link's data stream: LinkPublish batches in exact
// mode, BloomPublish batches in Bloom mode (the hellos agreed on the mode).
func (r *Router) readLinkData(ctx context.Context, c *conn, sr *streamReader) error {
	if r.cfg.Forward != ForwardBloom {
		return r.readEvents(ctx, c, sr, wire.TypeLinkPublish, func(dec *wire.EventDecoder, body []byte) (loopMsg, error) {
			m, err := dec.DecodeOwnedLinkPublish(body) // body is ours: ReadFrame allocated it
			if err != nil {
				return loopMsg{}, err
			}
			return loopMsg{pub: &m.Publish, witness: m.Witness}, nil
		})
	}
	for {
		t, body, err := c.readFrame(sr)
		if err != nil {
			return err
		}
		at := time.Now()
		if t != wire.TypeBloomPublish {
			if !t.Known() {
				return wire.Errorf(wire.CodeUnknownType, "unknown frame type %d", byte(t))
			}
			return wire.Errorf(wire.CodeUnexpected, "%s frame on a bloom link's data stream", t)
		}
		m, err := wire.Decode(t, body)
		if err != nil {
			return err
		}
		bp := m.(*wire.BloomPublish)
		if err := c.checkWitnesses(bp); err != nil {
			return err
		}
		if !r.send(ctx, loopMsg{kind: msgBloomPublish, iface: c.id, bpub: bp, at: at}) {
			return errStopped
		}
	}
}

// entryWitness is the witness a BloomPublish entry carries on this link:
// w where the link speaks wire.VersionBloomWitness, none where it does not.
func (c *conn) entryWitness(w uint64) uint64 {
	if c.witness {
		return w
	}
	return 0
}

// checkWitnesses refuses a batch whose entries carry witnesses on a link
// that did not agree on wire.VersionBloomWitness.
func (c *conn) checkWitnesses(bp *wire.BloomPublish) error {
	if c.witness {
		return nil
	}
	for i, e := range bp.Events {
		if e.Witness != 0 {
			return wire.Errorf(wire.CodeUnexpected, "bloom-publish entry %d carries a witness on a link of protocol version %d (witnesses need version %d)", i, wire.Version, wire.VersionBloomWitness)
		}
	}
	return nil
}
