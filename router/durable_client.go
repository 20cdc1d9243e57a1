package router

import (
	"fmt"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// fromClient takes a durable message from a client connection: publisher
// messages go to the pubend they name (which must be hosted here),
// subscriber messages to the SHB. Anything else, or a pubend hosted
// elsewhere, is answered with a refusal; the connection stays up. It
// blocks while the driver's input is full and returns false once the
// node stopped.
func (d *durableNode) fromClient(c *conn, m durable.Msg, stop <-chan struct{}) bool {
	from := clientNode(c.id)
	var to string
	switch m.Kind {
	case durable.MsgHello, durable.MsgPublish:
		if rto, refusal, ok := d.replicaTarget(m.Pubend); ok {
			if refusal != nil {
				refusal.Publisher = m.Publisher
				d.pushRefusal(c, *refusal)
				return true
			}
			to = rto
			break
		}
		if _, ok := d.pubends[m.Pubend]; !ok {
			d.refuse(c, m, fmt.Sprintf("pubend %q is not hosted by router %s", m.Pubend, d.name))
			return true
		}
		to = pubendNode(d.name, m.Pubend)
	case durable.MsgResume, durable.MsgAck, durable.MsgUnsubscribe:
		if m.Sub == "" || len(m.Sub) > wire.MaxNameLen {
			d.refuse(c, m, "a subscription id has 1 to 255 bytes")
			return true
		}
		to = shbID(d.name)
	default:
		d.refuse(c, m, fmt.Sprintf("a client may not send durable %s messages", m.Kind))
		return true
	}
	d.mu.Lock()
	cl := d.clients[c.id]
	if cl == nil {
		cl = &durableClient{c: c, sessions: map[string]uint64{}}
		d.clients[c.id] = cl
	}
	if m.Kind == durable.MsgResume {
		cl.sessions[m.Sub] = m.Session
	}
	d.mu.Unlock()
	return d.input(durableInput{env: durable.Envelope{From: from, To: to, Msg: m}}, stop)
}

// refuse answers a client's message with a durable refusal.
func (d *durableNode) refuse(c *conn, m durable.Msg, reason string) {
	d.pushRefusal(c, durable.Msg{Kind: durable.MsgRefused, Sub: m.Sub, Session: m.Session, Publisher: m.Publisher, Reason: reason})
}

// pushRefusal sends a durable refusal to a client.
func (d *durableNode) pushRefusal(c *conn, r durable.Msg) {
	d.met.refused.Inc()
	if !c.q.pushControl(wire.AppendFrame(nil, &wire.Durable{Msg: forClient(c, r)})) {
		c.fail(wire.CodeSlowConsumer, "durable messages not read")
	}
}

// forClient returns m as client c may decode it: without the not-leader
// fields for a client older than wire.VersionLeader (its reason still
// says it).
func forClient(c *conn, m durable.Msg) durable.Msg {
	if c.version < wire.VersionLeader {
		m.NotLeader, m.Leader = false, ""
	}
	return m
}

// clientDetached tells the driver that a client connection closed.
func (d *durableNode) clientDetached(id ifaceID, stop <-chan struct{}) {
	d.mu.Lock()
	_, ok := d.clients[id]
	d.mu.Unlock()
	if ok {
		d.input(durableInput{detach: id}, stop)
	}
}

// clientGone ends the sessions of a closed client connection (run by the
// driver).
func (d *durableNode) clientGone(id ifaceID) {
	d.mu.Lock()
	cl := d.clients[id]
	delete(d.clients, id)
	d.mu.Unlock()
	if cl == nil {
		return
	}
	for _, h := range d.replicas {
		delete(h.publishers, clientNode(id))
	}
	for _, sub := range sortedNames(cl.sessions) {
		d.stepLocal(durable.Envelope{From: clientNode(id), To: shbID(d.name),
			Msg: durable.Msg{Kind: durable.MsgDisconnect, Sub: sub, Session: cl.sessions[sub]}})
	}
}
