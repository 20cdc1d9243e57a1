package router

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/core"
	"github.com/sift-pubsub/sift/router/mesh"
)

// links is the matching loop's mesh state: the protocol state machine and
// the connections of the links it has up. A nil mesh means the router
// takes no links and acknowledges subscriptions at once.
//
// Local clients are mesh.Client(ifaceID): interface ids count connections
// from 1, so they fit until 2^32 connections have come and gone.
type links struct {
	mesh   *mesh.Mesh
	byLink map[mesh.Link]*conn
	linkOf map[ifaceID]mesh.Link
	bloom  *bloomState // nil: exact forwarding (bloom.go)
	// core is the router's core state machine (router/core; so far it
	// holds RTO and FF placement), sharing mesh; nil without a mesh.
	core *core.Core
	// adverts is the advertisement bookkeeping (advert.go); nil when
	// Config.Advertise is off.
	adverts *advertState
}

// newLinks returns the mesh state cfg asks for.
func newLinks(cfg Config) (links, error) {
	if cfg.MaxLinks == 0 {
		return links{}, nil
	}
	m, err := mesh.New(mesh.Config{Name: cfg.Name, Table: cfg.Table, Merge: cfg.Merge, MaxLinks: cfg.MaxLinks, Incarnation: newIncarnation(), Advertise: cfg.Advertise})
	if err != nil {
		return links{}, err
	}
	b, err := newBloomState(cfg)
	if err != nil {
		return links{}, err
	}
	set, err := cfg.Assist.resolve()
	if err != nil {
		return links{}, err
	}
	if err := m.Pin(set.Fixed); err != nil {
		return links{}, fmt.Errorf("router: fixed filters: %w", err)
	}
	return links{mesh: m, byLink: make(map[mesh.Link]*conn), linkOf: make(map[ifaceID]mesh.Link), bloom: b, core: core.New(core.Config{Mesh: m, Assist: set}), adverts: newAdvertState(cfg)}, nil
}

// subscribe installs a client subscription in the engine and, with a
// mesh, in the mesh too: the client's Ack then waits for mesh Ready.
func (l *matchLoop) subscribe(m loopMsg) {
	err := l.eng.Subscribe(m.iface, m.sub, m.filter)
	if err != nil || l.mesh == nil {
		l.reply(m.iface, wire.TypeSubscribe, m.sub, err)
		return
	}
	l.metrics.Subscriptions.Set(float64(l.eng.Subscriptions()))
	f, err := match.Parse(m.filter)
	if err == nil {
		l.bloomSubscribe(m.iface, m.sub, f) // terms travel ahead of the mesh's messages
		if err = l.meshSubscribe(m.iface, m.sub, f); err == nil {
			return
		}
		l.bloomUnsubscribe(m.iface, m.sub)
	}
	l.eng.Unsubscribe(m.iface, m.sub) // the engine accepted it: cannot fail
	l.reply(m.iface, wire.TypeSubscribe, m.sub, wire.Errorf(wire.CodeInternal, "mesh refused subscription %d: %v", m.sub, err))
}

// unsubscribe removes a client subscription from the engine and the mesh.
func (l *matchLoop) unsubscribe(m loopMsg) {
	err := l.eng.Unsubscribe(m.iface, m.sub)
	if err == nil && l.mesh != nil {
		out, _ := l.mesh.Unsubscribe(mesh.Client(m.iface), m.sub) // mirrors the engine
		l.assistUnsubscribe(m.iface, m.sub)
		l.apply(out)
		l.bloomUnsubscribe(m.iface, m.sub)
	}
	l.reply(m.iface, wire.TypeUnsubscribe, m.sub, err)
}

// linkUp hands a peer's hello to the mesh and answers on m.linkErr; on
// success the link's connection is attached as a neighbour interface.
func (l *matchLoop) linkUp(m loopMsg) {
	if l.mesh == nil {
		m.linkErr <- wire.Errorf(wire.CodeUnexpected, "this router takes no router links (its MaxLinks is 0)")
		return
	}
	if err := l.bloomCheckHello(m.hello); err != nil {
		m.linkErr <- err
		return
	}
	hello := l.mesh.HelloTo(m.hello.Name)
	l.bloomHello(hello)
	id, out, err := l.mesh.LinkUp(m.hello)
	if err != nil {
		m.linkErr <- wire.Errorf(wire.CodeUnexpected, "%v", err)
		return
	}
	if err := l.eng.Attach(m.iface, core.KindNeighbour); err != nil {
		l.apply(l.mesh.LinkDown(id))
		m.linkErr <- fmt.Errorf("link %s: %w", m.hello.Name, err)
		return
	}
	m.conn.linkIn = l.metrics.LinkEvents.WithLabelValues(m.hello.Name, "in")
	m.conn.linkOut = l.metrics.LinkEvents.WithLabelValues(m.hello.Name, "out")
	l.conns[m.iface] = m.conn
	l.byLink[id] = m.conn
	l.linkOf[m.iface] = id
	m.linkErr <- nil
	if m.sendHello {
		l.pushControl(m.conn, wire.AppendFrame(nil, hello))
	}
	l.bloomLinkUp(id, m.hello.Name) // the dictionary snapshot precedes the mesh's
	l.apply(out)
}

// linkFrame hands a control message received on a link to the mesh; a
// refusal closes the link.
func (l *matchLoop) linkFrame(m loopMsg) {
	id, ok := l.linkOf[m.iface]
	if !ok {
		return // detached while the frame was queued
	}
	if bt, ok := m.frame.(*wire.BloomTerms); ok {
		l.bloomTerms(m.iface, id, bt) // applied and forwarded before anything later
		return
	}
	out, err := l.mesh.Receive(id, m.frame)
	if err != nil {
		l.refuseLink(m.iface, err)
		return
	}
	l.bloomRoutes(m.iface, id, m.frame)
	l.apply(out)
}

// meshDetach tells the mesh an interface went away: a link is down, or a
// client's subscriptions are dropped.
func (l *matchLoop) meshDetach(id ifaceID) {
	if l.mesh == nil {
		return
	}
	if link, ok := l.linkOf[id]; ok {
		delete(l.linkOf, id)
		delete(l.byLink, link)
		l.bloomLinkDown(link)
		l.apply(l.mesh.LinkDown(link))
		return
	}
	l.bloomDropClient(id)
	l.assistDetach(id)
	l.apply(l.mesh.DropClient(mesh.Client(id)))
}

// apply carries out a mesh output: link messages onto the links' control
// lanes, client Acks for Ready subscriptions (AdvertAcks for Ready
// advertisements), and links to close.
func (l *matchLoop) apply(out mesh.Output) {
	for _, s := range out.Sends {
		if c, ok := l.byLink[s.Link]; ok {
			l.pushControl(c, wire.AppendFrame(nil, s.Msg))
		}
	}
	for _, r := range out.Ready {
		var ack wire.Message = &wire.Ack{About: wire.TypeSubscribe, ID: r.Ref}
		if r.Advert {
			ack = &wire.AdvertAck{About: wire.TypeAdvertise, ID: r.Ref}
		}
		if r.Batch {
			ack = batchAck(r.Ref) // subbatch.go
		}
		if c, ok := l.conns[ifaceID(r.Client)]; ok {
			l.pushControl(c, wire.AppendFrame(nil, ack))
		}
	}
	for _, cl := range out.Close {
		if c, ok := l.byLink[cl.Link]; ok {
			c.fail(wire.CodeUnexpected, cl.Reason)
			l.detach(c.id)
		}
	}
}
