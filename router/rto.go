package router

import (
	"context"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/core"
)

// Client-assisted placement (RTO and FF) lives in router/core
// (core/assist.go): this file hands it its inputs from the matching
// loop's call sites. The core's effects are carried out by coreloop.go.

// assistFromClient hands an assist message (AssistOffer, RTOAnswer,
// FFClaim, PlaceClaim) from client connection c to the matching loop (called by the
// connection's control reader).
func (r *Router) assistFromClient(ctx context.Context, c *conn, m wire.Message) error {
	if !r.send(ctx, coreMsg(core.ClientFrame{Conn: c.id, Msg: m})) {
		return errStopped
	}
	return nil
}

// countAssist applies one of the core's RTO/FF metric updates.
func (l *matchLoop) countAssist(m core.Metric) {
	am, n := l.metrics.Assist, float64(m.N)
	switch m.Kind {
	case core.TestsLocal:
		am.Tests.WithLabelValues("local").Add(n)
	case core.TestsDone:
		am.Tests.WithLabelValues("done").Add(n)
	case core.TestsSaved:
		am.Tests.WithLabelValues("saved").Add(n)
	case core.PlacedRTO:
		am.Placements.WithLabelValues("rto", "placed").Add(n)
	case core.FallbackRTO:
		am.Placements.WithLabelValues("rto", "fallback").Add(n)
	case core.PlacedFF:
		am.Placements.WithLabelValues("ff", "placed").Add(n)
	case core.FallbackFF:
		am.Placements.WithLabelValues("ff", "fallback").Add(n)
	case core.PlacedClaim:
		am.Placements.WithLabelValues("claim", "placed").Add(n)
	case core.RefusedClaim:
		am.Placements.WithLabelValues("claim", "fallback").Add(n)
	case core.Assistants:
		am.Assistants.Set(n)
	}
}
