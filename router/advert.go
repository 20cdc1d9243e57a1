package router

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/core"
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
