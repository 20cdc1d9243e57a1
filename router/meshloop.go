package router

import (
	"fmt"
	"github.com/sift-pubsub/sift/internal/wire"

	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/core"
	"github.com/sift-pubsub/sift/router/mesh"
)

// The matching loop's side of router links and of clients'
// subscriptions: the logic (the engine's interfaces and subscriptions,
// which connection is which link, the order of Bloom and mesh messages,
// refusals) is router/core's (core/clients.go, core/links.go,
// core/bloom.go). Readers hand the loop Subscribe, Unsubscribe and
// LinkFrame as core inputs (coreMsg); this file steps LinkUp and keeps
// what is I/O: the link's verdict channel and its metrics.

// links is the matching loop's core and what its event path reads of it.
type links struct {
	// core is the router's core state machine (router/core): clients'
	// subscriptions, the mesh glue, Bloom's dictionary and trees, the link
	// table, RTO and FF.
	core *core.Core
	// mesh is the core's mesh, which the loop still reads for its event
	// path (advertisements' conformance), Routes and link hellos; nil
	// without links.
	mesh *mesh.Mesh
	// bloom is Bloom forwarding's per-link counters; nil: exact.
	bloom bloomLinks
	// adverts is the advertisement bookkeeping (advert.go); nil when
	// Config.Advertise is off.
	adverts *advertState
}

// newLinks returns the core cfg asks for, over the engine eng (which
// the loop shares); without links (MaxLinks 0) it has no mesh.
func newLinks(cfg Config, eng *core.Engine) (links, error) {
	if cfg.MaxLinks == 0 {
		c, err := core.New(core.Config{Engine: eng})
		return links{core: c}, err
	}
	m, err := mesh.New(mesh.Config{Name: cfg.Name, Table: cfg.Table, Merge: cfg.Merge, MaxLinks: cfg.MaxLinks, Incarnation: newIncarnation(), Advertise: cfg.Advertise, LinkVersion: cfg.LinkVersion})
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
	c, err := core.New(core.Config{Engine: eng, Mesh: m, Assist: set, Bloom: bc})
	if err != nil {
		return links{}, err
	}
	lk := links{core: c, mesh: m, adverts: newAdvertState(cfg)}
	if bc != nil {
		lk.bloom = make(bloomLinks)
	}
	return lk, nil
}

// linkUp hands a peer's hello to the core, queues the core's frames for
// the link c (this router's hello if it answers, the snapshots), and only
// then answers on verdict: once the link's goroutine has the verdict it
// brings up the link's durable side, whose frames must not overtake the
// hello (the peer takes the first frame on a link for its hello).
func (l *matchLoop) linkUp(in core.LinkUp, c *conn, verdict chan<- error) {
	if err := l.feedCore(in); err != nil {
		verdict <- err
		return
	}
	name := in.Hello.Name
	c.linkIn = l.metrics.LinkEvents.WithLabelValues(name, "in")
	c.linkOut = l.metrics.LinkEvents.WithLabelValues(name, "out")
	if l.bloom != nil {
		id, _ := l.core.LinkOf(in.Conn)
		c.witness = l.mesh.LinkVersion(id) >= wire.VersionBloomWitness
		l.bloom[in.Conn] = bloomLinkMetrics{
			exactIn:       l.metrics.Bloom.ExactIn.WithLabelValues(name),
			falseForwards: l.metrics.Bloom.FalseForwards.WithLabelValues(name),
		}
	}
	l.conns[in.Conn] = c
	l.carryCore()
	verdict <- nil
}
