package router

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/core"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Advertisements (Config.Advertise; mesh.Config.Advertise has the
// protocol). The client side of the router: Advertise and Unadvertise
// frames go to the mesh through the matching loop and router/core
// (core.Advertise, core.Unadvertise), and Ready advertisements are
// answered with AdvertAck (core/links.go apply). A
// client's event that matches none of its advertisements is refused: the
// whole batch is dropped and the connection closed with an error naming
// the event, since subscriptions reach this router only where
// advertisements said they must, and delivering it here alone would make
// its fate depend on where subscribers happen to be.

// advertState is the matching loop's advertisement bookkeeping: its
// metrics (nil without advertisements).
type advertState struct {
	refused prometheus.Counter
}

func newAdvertState(cfg Config) *advertState {
	if !cfg.Advertise {
		return nil
	}
	a := &advertState{refused: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sift_router_advert_refused_events_total",
		Help: "Client events refused because they matched none of the client's advertisements (advertise mode).",
	})}
	if cfg.Metrics != nil && cfg.Metrics.Registry != nil {
		if err := cfg.Metrics.Registry.Register(a.refused); err != nil {
			if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
				a.refused = are.ExistingCollector.(prometheus.Counter) // routers sharing a registry
			}
		}
	}
	return a
}

// advertFromClient hands a client's Advertise or Unadvertise, read from
// its control stream, to the matching loop. The control reader
// (conn.go readControl) calls it:
//
//	case *wire.Advertise, *wire.Unadvertise:
//		if err := r.advertFromClient(ctx, c, m); err != nil {
//			return err
//		}
//		continue
func (r *Router) advertFromClient(ctx context.Context, c *conn, m wire.Message) error {
	id := c.id
	if !r.send(ctx, loopMsg{kind: msgQuery, query: func(l *matchLoop) { l.advert(id, m) }}) {
		return errStopped
	}
	return nil
}

// advert handles an Advertise or Unadvertise inside the loop. Without
// advertisements (no mesh, or Config.Advertise off) both are acknowledged
// at once: every subscription already reaches every router.
func (l *matchLoop) advert(id ifaceID, msg wire.Message) {
	if _, ok := l.conns[id]; !ok {
		return // detached while the request was queued
	}
	on := l.mesh != nil && l.mesh.Advertising()
	switch m := msg.(type) {
	case *wire.Advertise:
		f, perr := match.Parse(m.Filter)
		switch {
		case perr != nil:
			l.advertReply(id, wire.TypeAdvertise, m.ID, wire.Errorf(wire.CodeBadFilter, "advertisement %d: %v", m.ID, perr))
		case !on:
			l.advertReply(id, wire.TypeAdvertise, m.ID, nil)
		default:
			if err := l.stepCore(core.Advertise{Conn: id, ID: m.ID, Filter: f}); err != nil {
				l.advertReply(id, wire.TypeAdvertise, m.ID, wire.Errorf(wire.CodeDuplicateSubscription, "%v", err))
			} // else its Ready becomes the AdvertAck
		}
	case *wire.Unadvertise:
		if on {
			if err := l.stepCore(core.Unadvertise{Conn: id, ID: m.ID}); err != nil {
				l.advertReply(id, wire.TypeUnadvertise, m.ID, wire.Errorf(wire.CodeUnknownSubscription, "%v", err))
				return
			}
		}
		l.advertReply(id, wire.TypeUnadvertise, m.ID, nil)
	}
}

// advertReply acknowledges an Advertise or Unadvertise, or sends its
// (non-fatal) error frame.
func (l *matchLoop) advertReply(id ifaceID, about wire.Type, ref uint64, err error) {
	if err != nil {
		l.reply(id, about, ref, err)
		return
	}
	if c, ok := l.conns[id]; ok {
		l.pushControl(c, wire.AppendFrame(nil, &wire.AdvertAck{About: about, ID: ref}))
	}
}

// refuseUnadvertised checks a client's Publish batch against the client's
// advertisements and, if an event matches none, refuses the whole batch:
// nothing of it is routed, the refused events are counted, and the
// connection is closed with an error naming the first such event. It
// reports whether the batch was refused. Batches from links, and every
// batch without advertisements, pass. The matching loop's publish
// (loop.go) calls it first:
//
//	if l.refuseUnadvertised(m) {
//		return
//	}
func (l *matchLoop) refuseUnadvertised(m loopMsg) bool {
	if l.adverts == nil || l.mesh == nil {
		return false
	}
	if l.isLink(m.iface) {
		return false
	}
	first, n := -1, 0
	for i, ev := range m.pub.Events {
		if !l.mesh.Conforms(mesh.Client(m.iface), ev) {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return false
	}
	l.adverts.refused.Add(float64(n))
	l.refuseLink(m.iface, fmt.Errorf("publish batch %d refused: event %d %s matches none of this connection's advertisements (%d of %d events do not; this router runs advertisements)",
		m.pub.Seq, first, m.pub.Events[first], n, len(m.pub.Events))) // linkloop.go: any connection
	return true
}
