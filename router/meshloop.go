package router

import (
	"fmt"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/core"
	"github.com/sift-pubsub/sift/router/mesh"
)

// The matching loop's side of router links and of the subscriptions the
// mesh places: the mesh glue (which connection is which link, the order
// of Bloom and mesh messages, refusals) is router/core's (core/links.go,
// core/bloom.go); this file steps it with LinkUp, LinkFrame, Subscribe,
// Unsubscribe and Detach, and keeps what is I/O: the link's verdict
// channel, its metrics, the engine's and the replies' part.

// links is the matching loop's mesh state. A nil core means the router
// takes no links and acknowledges subscriptions at once.
type links struct {
	// core is the router's core state machine (router/core): the mesh
	// glue, Bloom's dictionary and trees, RTO and FF; nil without a mesh.
	core *core.Core
	// mesh is the core's mesh, which the loop still reads for its event
	// path (advertisements' conformance), Routes and link hellos; nil
	// without links.
	mesh *mesh.Mesh
	// bloom is Bloom forwarding's event path (forward.go); nil: exact.
	bloom *bloomPath
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
	set, err := cfg.Assist.resolve()
	if err != nil {
		return links{}, err
	}
	if err := m.Pin(set.Fixed); err != nil {
		return links{}, fmt.Errorf("router: fixed filters: %w", err)
	}
	var bc *bloomfwd.Config
	if cfg.Forward == ForwardBloom {
		c := cfg.bloomConfig()
		bc = &c
	}
	c, err := core.New(core.Config{Mesh: m, Assist: set, Bloom: bc})
	if err != nil {
		return links{}, err
	}
	lk := links{core: c, mesh: m, adverts: newAdvertState(cfg)}
	if bc != nil {
		lk.bloom = &bloomPath{dict: c.BloomDict(), trees: c.BloomTrees(), links: make(map[ifaceID]bloomLinkMetrics)}
	}
	return lk, nil
}

// isLink reports whether connection id is a router link that is up.
func (l *matchLoop) isLink(id ifaceID) bool {
	if l.core == nil {
		return false
	}
	_, ok := l.core.LinkOf(id)
	return ok
}

// linkConn returns the connection of a mesh link that is up.
func (l *matchLoop) linkConn(link mesh.Link) (*conn, bool) {
	id, ok := l.core.ConnOf(link)
	if !ok {
		return nil, false
	}
	c, ok := l.conns[id]
	return c, ok
}

// subscribe installs a client subscription in the engine and, with a
// mesh, through the core in the mesh too: the client's Ack then waits for
// mesh Ready.
func (l *matchLoop) subscribe(m loopMsg) {
	err := l.eng.Subscribe(m.iface, m.sub, m.filter)
	if err != nil || l.core == nil {
		l.reply(m.iface, wire.TypeSubscribe, m.sub, err)
		return
	}
	l.metrics.Subscriptions.Set(float64(l.eng.Subscriptions()))
	f, err := match.Parse(m.filter)
	if err == nil {
		if err = l.stepCore(core.Subscribe{Conn: m.iface, Sub: m.sub, Filter: f}); err == nil {
			return
		}
	}
	l.eng.Unsubscribe(m.iface, m.sub) // the engine accepted it: cannot fail
	l.reply(m.iface, wire.TypeSubscribe, m.sub, wire.Errorf(wire.CodeInternal, "mesh refused subscription %d: %v", m.sub, err))
}

// unsubscribe removes a client subscription from the engine and, through
// the core, from the mesh.
func (l *matchLoop) unsubscribe(m loopMsg) {
	err := l.eng.Unsubscribe(m.iface, m.sub)
	if err == nil && l.core != nil {
		l.stepCore(core.Unsubscribe{Conn: m.iface, Sub: m.sub})
	}
	l.reply(m.iface, wire.TypeUnsubscribe, m.sub, err)
}

// linkUp attaches a link's connection as a neighbour interface and hands
// the peer's hello to the core; it answers on m.linkErr before the
// core's frames for the link (this router's hello if it answers, the
// snapshots) are queued.
func (l *matchLoop) linkUp(m loopMsg) {
	if l.core == nil {
		m.linkErr <- wire.Errorf(wire.CodeUnexpected, "this router takes no router links (its MaxLinks is 0)")
		return
	}
	if err := l.eng.Attach(m.iface, core.KindNeighbour); err != nil {
		m.linkErr <- fmt.Errorf("link %s: %w", m.hello.Name, err)
		return
	}
	if err := l.feedCore(core.LinkUp{Conn: m.iface, Hello: m.hello, SendHello: m.sendHello}); err != nil {
		l.eng.Detach(m.iface)
		m.linkErr <- err
		return
	}
	name := m.hello.Name
	m.conn.linkIn = l.metrics.LinkEvents.WithLabelValues(name, "in")
	m.conn.linkOut = l.metrics.LinkEvents.WithLabelValues(name, "out")
	if l.bloom != nil {
		l.bloom.links[m.iface] = bloomLinkMetrics{
			exactIn:       l.metrics.Bloom.ExactIn.WithLabelValues(name),
			falseForwards: l.metrics.Bloom.FalseForwards.WithLabelValues(name),
		}
	}
	l.conns[m.iface] = m.conn
	m.linkErr <- nil
	l.carryCore()
}

// linkFrame hands a control message received on a link to the core; a
// refusal closes the link (Ready's Close).
func (l *matchLoop) linkFrame(m loopMsg) {
	if l.core != nil {
		l.stepCore(core.LinkFrame{Conn: m.iface, Msg: m.frame})
	}
}

// refuseLink closes a connection (a link, or a client that broke the
// advertisement rule) that sent something this router refuses. The
// core's own refusals come as Ready's Close.
func (l *matchLoop) refuseLink(iface ifaceID, err error) {
	c, ok := l.conns[iface]
	if !ok {
		return
	}
	l.metrics.Errors.WithLabelValues(wire.CodeUnexpected.String()).Inc()
	c.fail(wire.CodeUnexpected, err.Error())
	l.detach(iface)
}
