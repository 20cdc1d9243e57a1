package router

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// send carries out messages the machines emitted: those for this router's
// machines are appended to local (the driver steps them next), the others
// go to a client connection or over a router link. Nothing blocks: link
// messages wait in the link's outbox while its lane is full (see
// durable_outbox.go), a full client lane closes the client as a slow
// consumer.
func (d *durableNode) send(msgs []durable.Envelope, local []durable.Envelope) []durable.Envelope {
	for _, env := range msgs {
		switch {
		case d.isLocal(env.To):
			local = append(local, env)
		case isClientNode(env.To):
			d.toClient(env)
		default:
			d.toLink(env)
		}
	}
	d.retryHeldSilences()
	d.flushClients()
	return local
}

// maxClientEntry is the most durable frames packed into one lane entry of
// a client connection.
const maxClientEntry = 64

// clientBatch is the frames for one client gathered during a send, pushed
// as one lane entry (several messages per write, not one frame each).
type clientBatch struct {
	cl  *durableClient
	buf []byte
	n   int
}

// queueClient adds a frame for a client to its batch. A batch's buffer
// starts with the size of the client's last one (durableClient.bufHint),
// so that a batch of events is encoded without growing it frame by frame.
func (d *durableNode) queueClient(id ifaceID, cl *durableClient, m durable.Msg) {
	b := d.clientOut[id]
	if b == nil || b.cl != cl {
		if b != nil {
			d.pushClient(b)
		}
		b = &clientBatch{cl: cl}
		d.clientOut[id] = b
		d.clientOrder = append(d.clientOrder, id)
	}
	if b.buf == nil {
		b.buf = make([]byte, 0, cl.bufHint)
	}
	d.clientEnc.Msg = m
	b.buf = wire.AppendFrame(b.buf, &d.clientEnc)
	d.clientEnc.Msg = durable.Msg{} // keep nothing of it
	if b.n++; b.n >= maxClientEntry {
		d.pushClient(b)
		b.buf, b.n = nil, 0
	}
}

// maxClientBufHint bounds the buffer a client batch starts with.
const maxClientBufHint = 64 << 10

// flushClients pushes every client's batch, in the order clients were
// first sent to.
func (d *durableNode) flushClients() {
	for _, id := range d.clientOrder {
		if b := d.clientOut[id]; b != nil {
			d.pushClient(b)
		}
		delete(d.clientOut, id)
	}
	d.clientOrder = d.clientOrder[:0]
}

// pushClient puts a batch on its client's lane; a full lane closes the
// client as a slow consumer.
func (d *durableNode) pushClient(b *clientBatch) {
	if b.n == 0 {
		return
	}
	b.cl.bufHint = min(len(b.buf), maxClientBufHint)
	if !b.cl.c.q.pushControl(b.buf) {
		d.met.slowClients.Inc()
		b.cl.c.fail(wire.CodeSlowConsumer, "durable messages not read")
		return
	}
	b.cl.sent.Store(true)
}

// isLocal reports whether node is one of this router's machines.
func (d *durableNode) isLocal(node string) bool {
	rest, ok := strings.CutPrefix(node, d.name)
	return ok && (rest == "" || rest[0] == '/')
}

// maxSilenceBacklog is the most frames a client's control lane may hold
// for a silence to be queued behind them: a subscriber that is that far
// behind gains nothing from another silence yet, and holding it back
// (durable_silence.go) keeps idle silences from filling the lane of a
// slow (not failed) subscriber.
const maxSilenceBacklog = 256

// toClient sends a message to a client connection.
func (d *durableNode) toClient(env durable.Envelope) {
	id, err := strconv.ParseUint(strings.TrimPrefix(env.To, "client/"), 10, 64)
	if err != nil {
		return
	}
	d.mu.Lock()
	cl := d.clients[ifaceID(id)]
	d.mu.Unlock()
	if cl == nil {
		return // gone: the SHB hears of it through its detach
	}
	d.view.toClient(env)
	if env.Msg.Kind == durable.MsgSubSilence {
		if ctrl, _ := cl.c.q.pending(); ctrl >= maxSilenceBacklog {
			d.holdSilence(ifaceID(id), env)
			return
		}
	}
	d.supersedeSilence(ifaceID(id), env.Msg)
	d.met.countToClient(env.Msg)
	d.queueClient(ifaceID(id), cl, forClient(cl.c, env.Msg))
}

// toLink sends a message to the intermediate broker of a neighbour. The
// machines address other routers only as neighbours (a pubend's upstream
// is the next hop toward its router), so a message for a router that is
// not linked now is dropped, as it would be on a broken link. Knowledge
// never goes back toward the pubend's router.
func (d *durableNode) toLink(env durable.Envelope) {
	m := env.Msg
	d.mu.Lock()
	l := d.links[env.To]
	if l != nil && isKnowledge(m.Kind) {
		// Not toward the pubend's router, nor anywhere while no link
		// leads there (its router is gone, or a replicated pubend's
		// leader moved and the directory has not caught up): knowledge
		// flows only outward from its router, and with no way back to
		// it, two neighbours would pass it back and forth for ever.
		if host := d.hosts[m.Pubend]; host != d.name {
			if toward := d.linkToward(host); toward == l || toward == nil {
				l = nil
			}
		}
	}
	d.mu.Unlock()
	if l == nil {
		return
	}
	d.queueLink(l, m)
}

func isKnowledge(k durable.MsgKind) bool {
	return k == durable.MsgData || k == durable.MsgSilence || k == durable.MsgLost
}

// linkToward returns the link whose side reaches router, or nil; d.mu is
// held.
func (d *durableNode) linkToward(router string) *durableLink {
	if l := d.links[router]; l != nil {
		return l
	}
	for _, peer := range sortedNames(d.links) {
		if l := d.links[peer]; slices.Contains(l.reach, router) {
			return l
		}
	}
	return nil
}

// linkUp records a router link that came up (peer is the neighbour's
// name, reach the routers behind it).
func (d *durableNode) linkUp(peer string, c *conn, reach []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.links[peer] = &durableLink{peer: peer, c: c, reach: slices.Clone(reach)}
	signal(d.topo)
}

// linkDown forgets a link, unless a newer connection replaced it.
func (d *durableNode) linkDown(peer string, c *conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l := d.links[peer]; l != nil && l.c == c {
		delete(d.links, peer)
		signal(d.topo)
	}
}

// linkReach replaces the routers reachable through a link.
func (d *durableNode) linkReach(peer string, c *conn, reach []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l := d.links[peer]; l != nil && l.c == c {
		l.reach = slices.Clone(reach)
		signal(d.topo)
	}
}

// routerAccepts reports whether an intermediate broker may take a message
// of kind k from a neighbour: the messages between brokers, not those of
// publishers, subscribers or the driver.
func routerAccepts(k durable.MsgKind) bool {
	switch k {
	case durable.MsgHello, durable.MsgHelloAck, durable.MsgPublish, durable.MsgPubAck, durable.MsgPubRefused,
		durable.MsgResume, durable.MsgStart, durable.MsgEvent, durable.MsgSubSilence, durable.MsgGap,
		durable.MsgAck, durable.MsgRefused, durable.MsgDisconnect, durable.MsgUnsubscribe, durable.MsgHeartbeat:
		return false
	}
	return true
}

// fromLink hands a durable message from neighbour peer to this router's
// intermediate broker. It blocks while the driver's input is full, and
// returns false once the node stopped.
func (d *durableNode) fromLink(peer string, m durable.Msg, stop <-chan struct{}) bool {
	if !routerAccepts(m.Kind) {
		d.met.refused.Inc()
		return true
	}
	d.met.linkIn.Inc()
	return d.input(durableInput{env: durable.Envelope{From: peer, To: d.name, Msg: m}}, stop)
}

// input queues an input for the driver, unless stop is closed first.
func (d *durableNode) input(in durableInput, stop <-chan struct{}) bool {
	select {
	case d.in <- in:
		return true
	case <-stop:
		return false
	}
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
