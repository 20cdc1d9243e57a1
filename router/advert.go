package router

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/core"
)

// Advertisements (Config.Advertise; mesh.Config.Advertise has the
// protocol). The client side of the router: Advertise and Unadvertise
// frames go to the mesh through the matching loop and router/core
// (core.Advertise, core.Unadvertise), which parses and answers them. A
// client's event that matches none of its advertisements is refused (by
// the core's Publish): the
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
// its control stream, to the core through the matching loop; the core
// parses the filter and answers (core/advert.go).
func (r *Router) advertFromClient(ctx context.Context, c *conn, msg wire.Message) error {
	var in core.Input
	switch m := msg.(type) {
	case *wire.Advertise:
		in = core.Advertise{Conn: c.id, ID: m.ID, Filter: m.Filter}
	case *wire.Unadvertise:
		in = core.Unadvertise{Conn: c.id, ID: m.ID}
	default:
		return fmt.Errorf("router: %s is no advertisement", msg.Type())
	}
	if !r.send(ctx, coreMsg(in)) {
		return errStopped
	}
	return nil
}
