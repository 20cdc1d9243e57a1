package router

import (
	"context"
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
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
// routers downstream.
func (l *matchLoop) bloomForward(ev match.Event, raw []byte) {
	b := l.bloom
	if l.core.Links() == 0 || b.trees.Len() == 0 {
		return // no link forwarded a filter
	}
	to := l.exactLinks(0, ev, b.to[:0])
	b.to = to
	if len(to) == 0 {
		return
	}
	sum := b.dict.Summarize(ev)
	l.metrics.Bloom.Summaries.Inc()
	l.metrics.Bloom.Fill.Observe(sum.Fill)
	if sum.Exact {
		l.metrics.Bloom.Saturated.Inc()
	}
	l.forwardEntry(to, wire.AppendBloomEvent(nil, sum.Exact, sum.Words, raw))
}

// forwardEntry queues a BloomPublish entry for links; a full queue closes
// the link as a slow consumer.
func (l *matchLoop) forwardEntry(to []mesh.Link, entry []byte) {
	for _, id := range to {
		if c, ok := l.linkConn(id); ok {
			l.queueLink(c, entry, 0)
		}
	}
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
	matches := 0
	for _, be := range m.bpub.Events {
		n, err := l.routeBloomEvent(m.iface, from, lm, be, local, m.at)
		if err != nil {
			l.refuseLink(m.iface, fmt.Errorf("bloom-publish: %w", err))
			return
		}
		matches += n
	}
	l.metrics.Matches.Add(float64(matches))
	l.metrics.EventsIn.Add(float64(len(m.bpub.Events)))
	c.linkIn.Add(float64(len(m.bpub.Events)))
}

// routeBloomEvent delivers one entry to local clients (decoding it only
// when local says the router has subscriptions, or it is marked exact)
// and forwards it; it returns the local matches.
func (l *matchLoop) routeBloomEvent(iface ifaceID, from mesh.Link, lm bloomLinkMetrics, be wire.BloomEvent, local bool, at time.Time) (int, error) {
	b := l.bloom
	var ev match.Event
	delivered, matches := false, 0
	if be.Exact || local {
		var err error
		b.dec.Wanted, _ = l.want.load() // the loop's current set: what its filters name
		if ev, err = b.dec.DecodeEvent(be.Event); err != nil {
			return 0, err
		}
		for _, h := range l.eng.Route(iface, ev) {
			matches += len(h.Subs)
			if c, ok := l.conns[h.Iface]; ok {
				l.deliver(c, h.Subs, be.Event, at)
				delivered = true
			}
		}
	}
	to := b.to[:0]
	if be.Exact {
		lm.exactIn.Inc()
		to = l.exactLinks(iface, ev, to)
	} else {
		var err error
		if to, err = b.trees.Route(be.Summary, from, to); err != nil {
			return 0, err
		}
		if !delivered && len(to) == 0 {
			lm.falseForwards.Inc()
		}
	}
	b.to = to
	l.forwardEntry(to, be.Entry)
	return matches, nil
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
		if !r.send(ctx, loopMsg{kind: msgBloomPublish, iface: c.id, bpub: m.(*wire.BloomPublish), at: at}) {
			return errStopped
		}
	}
}
