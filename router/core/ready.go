package core

import "github.com/sift-pubsub/sift/router/mesh"

// Ready is the effects of the inputs and ticks since the last Ready. The
// driver carries them out in field order: Metrics, then Frames, then
// Mesh.
type Ready struct {
	// Metrics are metric updates, in order. They come first so that a
	// client that sees an effect (an Ack) also sees it counted.
	Metrics []Metric
	// Frames are encoded control frames for connections, in the order the
	// core produced them: the driver queues each on its connection's
	// control lane in this order (a connection's frames must keep it), and
	// drops those for connections no longer attached. Frames come before
	// Mesh: an RTO placement's first queries are on their way before the
	// mesh's output for the same input is carried out.
	Frames []Frame
	// Mesh are mesh outputs to carry out in order, after Frames: link
	// messages, client Acks of Ready subscriptions, links to close.
	Mesh []mesh.Output
}

// Frame is one encoded frame for a connection.
type Frame struct {
	Conn ConnID
	Data []byte
}

// Metric is one metric update.
type Metric struct {
	Kind MetricKind
	// N is the amount added to a counter, or the value of a gauge.
	N uint64
}

// MetricKind names a metric the core updates.
type MetricKind uint8

// Metric kinds: covering tests by who did them (router/rto_metrics.go has
// their meaning), placements by mode and outcome, and the gauge of
// connected assistants.
const (
	TestsLocal MetricKind = iota + 1
	TestsDone
	TestsSaved
	PlacedRTO
	FallbackRTO
	PlacedFF
	FallbackFF
	Assistants // gauge
)

var metricNames = [...]string{
	TestsLocal: "tests-local", TestsDone: "tests-done", TestsSaved: "tests-saved",
	PlacedRTO: "placed-rto", FallbackRTO: "fallback-rto", PlacedFF: "placed-ff",
	FallbackFF: "fallback-ff", Assistants: "assistants",
}

func (k MetricKind) String() string {
	if int(k) < len(metricNames) && metricNames[k] != "" {
		return metricNames[k]
	}
	return "metric?"
}

// IsEmpty reports whether rd has no effect.
func (rd *Ready) IsEmpty() bool {
	return len(rd.Frames) == 0 && len(rd.Mesh) == 0 && len(rd.Metrics) == 0
}
