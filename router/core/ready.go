package core

import "github.com/sift-pubsub/sift/internal/wire"

// Ready is the effects of the inputs and ticks since the last Ready. The
// driver carries them out in field order: Metrics, then Frames, then
// Replies, then Close.
type Ready struct {
	// Metrics are metric updates, in order. They come first so that a
	// client that sees an effect (an Ack) also sees it counted.
	Metrics []Metric
	// Frames are encoded control frames for connections, clients and
	// links, in the order the core produced them: the driver queues each
	// on its connection's control lane in this order, and drops those for
	// connections no longer attached. The order is the protocol's: on a
	// link, a new link's hello, then Bloom's dictionary snapshot, then the
	// mesh's snapshot; for every input, Bloom dictionary updates before
	// the mesh's routes and barriers (bloomfwd's ordering rule, which
	// makes a subscription's Ack imply its terms are everywhere); an RTO
	// placement's queries before the mesh's output for the same input.
	Frames []Frame
	// Replies answer clients' requests (Subscribe, SubscribeBatch,
	// Unsubscribe) that the core answers itself: an Ack, or the refusal,
	// which the driver turns into an Error frame (or, for a fatal code,
	// closes the connection), logging and counting it. They come after the
	// Frames: a refused subscription's withdrawn Bloom terms are on their
	// way before its refusal, and an unsubscription's Ack follows the
	// mesh's messages for it.
	Replies []Reply
	// Close are connections (links) the core closed, after the Frames:
	// the core has already dropped them (their link-down messages to the
	// other links are in Frames, no frame after the close is addressed to
	// them); the driver fails each with its code and reason and forgets it
	// in its own state (the engine, the link table), without stepping
	// Detach.
	Close []Close
}

// Reply is the answer to a client's request About (its id Ref): an Ack
// if Err is nil, else the refusal (a *wire.ProtocolError, or an error the
// driver reports as internal).
type Reply struct {
	Conn  ConnID
	About wire.Type
	Ref   uint64
	Err   error
}

// Close is one connection the core closed.
type Close struct {
	Conn   ConnID
	Code   wire.Code
	Reason string
}

// Frame is one encoded frame for a connection.
type Frame struct {
	Conn ConnID
	Data []byte
}

// Metric is one metric update.
type Metric struct {
	Kind MetricKind
	// Code is the error code counted (Errors only).
	Code wire.Code
	// N is the amount added to a counter, or the value of a gauge.
	N uint64
}

// MetricKind names a metric the core updates.
type MetricKind uint8

// Metric kinds: covering tests by who did them (router/rto_metrics.go has
// their meaning), placements by mode and outcome, and the gauge of
// connected assistants; protocol errors sent, by code; the gauges of
// Bloom's dictionary terms and tree filters.
const (
	TestsLocal MetricKind = iota + 1
	TestsDone
	TestsSaved
	PlacedRTO
	FallbackRTO
	PlacedFF
	FallbackFF
	Assistants // gauge
	Errors
	BloomTerms    // gauge
	BloomFilters  // gauge
	Subscriptions // gauge: the engine's
)

var metricNames = [...]string{
	TestsLocal: "tests-local", TestsDone: "tests-done", TestsSaved: "tests-saved",
	PlacedRTO: "placed-rto", FallbackRTO: "fallback-rto", PlacedFF: "placed-ff",
	FallbackFF: "fallback-ff", Assistants: "assistants", Errors: "errors",
	BloomTerms: "bloom-terms", BloomFilters: "bloom-filters", Subscriptions: "subscriptions",
}

func (k MetricKind) String() string {
	if int(k) < len(metricNames) && metricNames[k] != "" {
		return metricNames[k]
	}
	return "metric?"
}

// IsEmpty reports whether rd has no effect.
func (rd *Ready) IsEmpty() bool {
	return len(rd.Frames) == 0 && len(rd.Replies) == 0 && len(rd.Close) == 0 && len(rd.Metrics) == 0
}
