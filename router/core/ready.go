package core

import "github.com/sift-pubsub/sift/internal/wire"

// Ready is the effects of the inputs and ticks since the last Ready. The
// driver carries them out in field order: Wanted, Metrics, then
// Deliveries and Forwards, then Frames, then Replies, then Close. Its slices, and the
// slices they hold (but Frames' Data), are the core's again after
// Advance: the driver does not keep them.
type Ready struct {
	// Wanted are attribute names the core's filters (the engine's, the
	// link table's) or Bloom dictionary terms name for the first time, in
	// the order they appeared (wanted.go). They come first: the driver
	// adds them to the names its readers decode with before anything that
	// follows (an Ack) can make a client publish events that need them.
	Wanted []string
	// Metrics are metric updates, in order. They come first so that a
	// client that sees an effect (an Ack) also sees it counted.
	Metrics []Metric
	// Deliveries are events for local clients (Publish, BloomPublish), in
	// the order of the events in their batches: the driver encodes each
	// into its connection's Deliver frames in this order, so a client
	// sees a publisher's events in the order published. Deliveries to a
	// connection no longer attached are dropped.
	Deliveries []Delivery
	// Forwards are events for links, in the order of the events in their
	// batches (the order each link receives them in). Deliveries and
	// Forwards go to different connections, so their relative order is
	// free; both come before Frames and the driver queues them on the data
	// lanes before any frame: a publisher's Ack (a frame) follows its
	// batch's deliveries and forwards.
	Forwards []Forward
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
	// Unsubscribe, and the refusals of Advertise and Unadvertise) that the
	// core answers itself: an Ack, or the refusal,
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

	// subs is the arena the Deliveries' Subs point into.
	subs []uint64
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
	// Conn is the link a per-link counter counts for (BloomExactIn,
	// BloomFalseForwards only).
	Conn ConnID
	// N is the amount added to a counter, or the value of a gauge.
	N uint64
	// Value is an observation (BloomFill only).
	Value float64
}

// MetricKind names a metric the core updates.
type MetricKind uint8

// Metric kinds: covering tests by who did them (router/rto_metrics.go has
// their meaning), placements by mode and outcome, and the gauge of
// connected assistants; protocol errors sent, by code; the gauges of
// Bloom's dictionary terms and tree filters; on the event path,
// subscriptions matched, events routed, the link table's decisions by
// what decided, client events refused by advertisements, and Bloom's
// summaries built, their fill (an observation per summary), summaries
// saturated (sent exact), exact entries received and false positives
// (per link), and inner routers' links decided by a tree walk or by the
// entry's witness.
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
	Matches
	EventsIn
	ByIndex
	ByWitness
	ByCache
	AdvertRefused
	BloomSummaries
	BloomFill // observation: Value
	BloomSaturated
	BloomExactIn       // per link: Conn
	BloomFalseForwards // per link: Conn
	BloomTreeWalks
	BloomWitnessDecisions
	PlacedClaim  // a claimed placement checked and used (claim.go)
	RefusedClaim // a claimed placement refused: the router placed the filter
)

var metricNames = [...]string{
	TestsLocal: "tests-local", TestsDone: "tests-done", TestsSaved: "tests-saved",
	PlacedRTO: "placed-rto", FallbackRTO: "fallback-rto", PlacedFF: "placed-ff",
	FallbackFF: "fallback-ff", Assistants: "assistants", Errors: "errors",
	BloomTerms: "bloom-terms", BloomFilters: "bloom-filters", Subscriptions: "subscriptions",
	Matches: "matches", EventsIn: "events-in", ByIndex: "by-index", ByWitness: "by-witness",
	ByCache: "by-cache", AdvertRefused: "advert-refused", BloomSummaries: "bloom-summaries",
	BloomFill: "bloom-fill", BloomSaturated: "bloom-saturated", BloomExactIn: "bloom-exact-in",
	BloomFalseForwards: "bloom-false-forwards", BloomTreeWalks: "bloom-tree-walks",
	BloomWitnessDecisions: "bloom-witness-decisions",
	PlacedClaim:           "placed-claim", RefusedClaim: "refused-claim",
}

func (k MetricKind) String() string {
	if int(k) < len(metricNames) && metricNames[k] != "" {
		return metricNames[k]
	}
	return "metric?"
}

// IsEmpty reports whether rd has no effect.
func (rd *Ready) IsEmpty() bool {
	return len(rd.Frames) == 0 && len(rd.Replies) == 0 && len(rd.Close) == 0 && len(rd.Metrics) == 0 &&
		len(rd.Deliveries) == 0 && len(rd.Forwards) == 0 && len(rd.Wanted) == 0
}

// reset empties rd for reuse, keeping its arrays; the references they
// held are cleared (events of batches gone, frames sent).
func (rd *Ready) reset() {
	clear(rd.Deliveries)
	clear(rd.Forwards)
	clear(rd.Frames)
	clear(rd.Replies)
	clear(rd.Close)
	*rd = Ready{
		Wanted: rd.Wanted[:0], Metrics: rd.Metrics[:0], Deliveries: rd.Deliveries[:0], Forwards: rd.Forwards[:0],
		Frames: rd.Frames[:0], Replies: rd.Replies[:0], Close: rd.Close[:0], subs: rd.subs[:0],
	}
}
