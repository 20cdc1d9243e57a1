package core

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/mesh"
)

// The event path: a batch of events, from a client or a link, routed to
// the local clients whose subscriptions match (by the engine) and to the
// links whose filters match (by the link table in exact mode, on the
// summary in Bloom mode), never back to the link it came from. The core
// decides; the driver encodes deliveries and queues forwards (Ready's
// Deliveries and Forwards), so no event is copied here: the slices point
// into the batch the driver stepped and into the Ready's own arena.

// Publish is a batch of events read from connection Conn's data stream:
// a client's Publish, or a link's LinkPublish in exact mode (Witness then
// has one witness per event, see LinkTable; nil from clients). Its events
// are decoded with at least the attribute names the core's filters name
// (the driver decodes again a batch decoded under an older set of wanted
// names before it steps it). Ready holds its deliveries to local clients,
// its events for links, and, for a client, its Ack (a frame, after both).
// In advertise mode a client's batch with an event that matches none of
// the client's advertisements is refused whole: nothing of it is routed,
// the refused events and the error are counted, the client is closed
// (Close) and dropped as by Detach. A batch from a connection that is
// gone is still routed (its events were accepted), without an Ack.
type Publish struct {
	Conn    ConnID
	Pub     *wire.Publish
	Witness []uint64
}

// BloomPublish is a BloomPublish batch read from link Conn's data stream
// (Bloom mode). Each entry is delivered exactly to local clients (decoded,
// keeping the names in Wanted, only when the router has subscriptions or
// the entry is marked exact) and forwarded unchanged: on its summary by
// the trees, or by the link table when marked exact. An entry forwarded
// on its summary that goes nowhere from here is counted as a false
// positive of the link it came on. A batch whose event or summary the
// core cannot use closes the link; the entries before it stay routed.
// A batch from a link that is gone is ignored.
type BloomPublish struct {
	Conn   ConnID
	Pub    *wire.BloomPublish
	Wanted *wire.Wanted // nil: every name
}

func (Publish) input()      {}
func (BloomPublish) input() {}

// From returns the connection the input came from (Input).
func (x Publish) From() ConnID { return x.Conn }

// From returns the connection the input came from (Input).
func (x BloomPublish) From() ConnID { return x.Conn }

// Delivery is an event for a local client: the subscriptions of Conn it
// matched, in ascending order, and the event's encoding. Both are valid
// until Advance.
type Delivery struct {
	Conn  ConnID
	Subs  []uint64
	Event []byte
}

// Forward is an event for a link: a LinkPublish event (exact mode) with
// the witness the next router checks first, or a BloomPublish entry
// (Bloom mode, Witness 0). Data is valid until Advance.
type Forward struct {
	Conn    ConnID
	Data    []byte
	Witness uint64
}

// publish routes a client's or an exact link's batch (see Publish).
func (c *Core) publish(in Publish) error {
	if in.Pub == nil {
		return fmt.Errorf("router core: publish from connection %d without a batch", in.Conn)
	}
	if in.Witness != nil && len(in.Witness) != len(in.Pub.Events) {
		return fmt.Errorf("router core: publish from connection %d: %d witnesses for %d events", in.Conn, len(in.Witness), len(in.Pub.Events))
	}
	_, fromLink := c.linkOf[in.Conn]
	if !fromLink && c.refuseUnadvertised(in) {
		return nil
	}
	matches := 0
	var decisions [NumDecisions]uint64
	// The engine matches the batch's events at once (on every core with a
	// parallel index) and hands them back in order; nothing changes the
	// subscriptions meanwhile (deliveries are the driver's, after Step).
	c.eng.RouteBatch(in.Conn, in.Pub.Events, func(i int, hits []Hit) {
		if len(hits) > 0 {
			matches += c.addDeliveries(hits, in.Pub.RawAt(i))
		}
		var w uint64
		if in.Witness != nil {
			w = in.Witness[i]
		}
		decisions[c.forwardEvent(in.Conn, in.Pub, i, w)]++
	})
	c.countDecisions(&decisions)
	c.metric(Matches, uint64(matches))
	c.metric(EventsIn, uint64(len(in.Pub.Events)))
	if _, client := c.eng.Ifaces[in.Conn]; client && !fromLink {
		c.frame(in.Conn, wire.AppendFrame(nil, &wire.Ack{About: wire.TypePublish, ID: in.Pub.Seq}))
	}
	return nil
}

// decidedMetric is the metric counting events whose links a decision of
// the link table chose.
var decidedMetric = [...]MetricKind{DecidedByIndex: ByIndex, DecidedByWitness: ByWitness, DecidedByCache: ByCache}

// countDecisions adds the link table's decisions of a batch to the
// metrics.
func (c *Core) countDecisions(decisions *[NumDecisions]uint64) {
	for d, n := range decisions[:DecidedNoLinks] {
		if n > 0 {
			c.metric(decidedMetric[d], n)
		}
	}
}

// addDeliveries adds an event's deliveries to the local clients of hits
// (the engine's answer for it) and returns the subscriptions matched.
func (c *Core) addDeliveries(hits []Hit, raw []byte) int {
	n := 0
	for _, h := range hits {
		n += len(h.Subs)
		start := len(c.rd.subs)
		c.rd.subs = append(c.rd.subs, h.Subs...) // Route's hits alias its scratch
		c.rd.Deliveries = append(c.rd.Deliveries, Delivery{Conn: h.Iface, Subs: c.rd.subs[start:len(c.rd.subs):len(c.rd.subs)], Event: raw})
	}
	return n
}

// forwardEvent adds the forwards of event i of pub to the links whose
// filters match it, never the one it came from: by the link table in
// exact mode (helped by the witness that came with it, if any), on its
// summary in Bloom mode. It returns what decided the link table's answer.
// The event's encoding is read (RawAt) only for an event that goes on.
func (c *Core) forwardEvent(from ConnID, pub *wire.Publish, i int, witness uint64) RouteDecision {
	if len(c.byLink) == 0 {
		return DecidedNoLinks
	}
	ev := pub.Events[i]
	if c.bloom != nil {
		return c.bloomForward(pub, i) // Bloom links carry only BloomPublish: from is a client
	}
	if c.lt == nil {
		return DecidedNoLinks
	}
	hits, decision := c.lt.Route(from, ev, witness)
	if len(hits) == 0 {
		return decision
	}
	raw := pub.RawAt(i)
	for _, h := range hits {
		c.rd.Forwards = append(c.rd.Forwards, Forward{Conn: h.Link, Data: raw, Witness: h.Witness})
	}
	return decision
}

// refuseUnadvertised refuses a client's batch with an event that matches
// none of the client's advertisements (see Publish) and reports whether
// it did. Without advertisements every batch passes.
func (c *Core) refuseUnadvertised(in Publish) bool {
	if c.mesh == nil || !c.mesh.Advertising() {
		return false
	}
	first, n := -1, 0
	for i, ev := range in.Pub.Events {
		if !c.mesh.Conforms(mesh.Client(in.Conn), ev) {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return false
	}
	c.metric(AdvertRefused, uint64(n))
	if _, ok := c.eng.Ifaces[in.Conn]; !ok {
		return true // gone already: nothing to close
	}
	c.rd.Metrics = append(c.rd.Metrics, Metric{Kind: Errors, Code: wire.CodeUnexpected, N: 1})
	c.closeConn(in.Conn, wire.CodeUnexpected, fmt.Sprintf("publish batch %d refused: event %d %s matches none of this connection's advertisements (%d of %d events do not; this router runs advertisements)",
		in.Pub.Seq, first, in.Pub.Events[first], n, len(in.Pub.Events)))
	c.detach(Detach{Conn: in.Conn})
	return true
}
