package router

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are a router's Prometheus metrics. Several routers in one process
// (tests, sift demo) each need their own Metrics and registry.
type Metrics struct {
	// Registry holds every metric below, plus Go and process collectors.
	Registry *prometheus.Registry

	// EventsIn counts events accepted from publishers.
	EventsIn prometheus.Counter
	// EventsOut counts events written to connections, once per event and
	// connection.
	EventsOut prometheus.Counter
	// Matches counts (event, subscription) matches.
	Matches prometheus.Counter
	// Subscriptions is the number of installed subscriptions.
	Subscriptions prometheus.Gauge
	// Connections is the number of attached client connections.
	Connections prometheus.Gauge
	// SlowConsumers counts connections closed for a full send queue.
	SlowConsumers prometheus.Counter
	// Errors counts protocol errors sent, by code name.
	Errors *prometheus.CounterVec
	// Latency is the publish-to-deliver histogram: from reading a publish
	// frame to writing the event onto a subscriber's stream.
	Latency prometheus.Histogram
	// ConnBytes and ConnFrames count traffic per connection (labels conn,
	// peer, dir), removed when the connection closes.
	ConnBytes  *prometheus.CounterVec
	ConnFrames *prometheus.CounterVec
	// LinkEvents counts events received from and forwarded to each
	// neighbour router (labels link = the peer's name, dir = in|out), kept
	// across reconnects, so filtering at intermediate hops is visible.
	LinkEvents *prometheus.CounterVec
	// Bloom are the Bloom forwarding metrics (bloom_metrics.go).
	Bloom *BloomMetrics
	// Assist are the RTO/FF metrics (rto_metrics.go).
	Assist *AssistMetrics
}

// NewMetrics creates the metrics in reg, or in a new registry with the Go
// and process collectors when reg is nil.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &Metrics{
		Registry: reg,
		EventsIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sift_router_events_in_total", Help: "Events accepted from publishers."}),
		EventsOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sift_router_events_out_total", Help: "Events written to connections (one per event and connection)."}),
		Matches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sift_router_matches_total", Help: "Subscription matches (one per event and matching subscription)."}),
		Subscriptions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sift_router_subscriptions", Help: "Installed subscriptions."}),
		Connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sift_router_connections", Help: "Open client connections."}),
		SlowConsumers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sift_router_slow_consumers_total", Help: "Connections closed because their send queue overflowed."}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sift_router_protocol_errors_total", Help: "Protocol errors sent, by code."}, []string{"code"}),
		Latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sift_router_publish_to_deliver_seconds",
			Help:    "From reading a publish frame to writing the event to a subscriber's stream.",
			Buckets: prometheus.ExponentialBuckets(10e-6, 2, 18)}),
		ConnBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sift_router_conn_bytes_total", Help: "Bytes per connection and direction."},
			[]string{"conn", "peer", "dir"}),
		ConnFrames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sift_router_conn_frames_total", Help: "Frames per connection and direction."},
			[]string{"conn", "peer", "dir"}),
		LinkEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sift_router_link_events_total", Help: "Events per neighbour router and direction."},
			[]string{"link", "dir"}),
	}
	reg.MustRegister(m.EventsIn, m.EventsOut, m.Matches, m.Subscriptions, m.Connections,
		m.SlowConsumers, m.Errors, m.Latency, m.ConnBytes, m.ConnFrames, m.LinkEvents)
	m.Bloom = newBloomMetrics(reg)
	m.Assist = newAssistMetrics(reg)
	return m
}

// connMetrics are one connection's traffic counters.
type connMetrics struct {
	bytesIn, bytesOut, framesIn, framesOut prometheus.Counter
	labels                                 []string
}

func (m *Metrics) forConn(conn, peer string) *connMetrics {
	return &connMetrics{
		bytesIn:   m.ConnBytes.WithLabelValues(conn, peer, "in"),
		bytesOut:  m.ConnBytes.WithLabelValues(conn, peer, "out"),
		framesIn:  m.ConnFrames.WithLabelValues(conn, peer, "in"),
		framesOut: m.ConnFrames.WithLabelValues(conn, peer, "out"),
		labels:    []string{conn, peer},
	}
}

// dropConn removes a closed connection's series.
func (m *Metrics) dropConn(cm *connMetrics) {
	for _, dir := range []string{"in", "out"} {
		m.ConnBytes.DeleteLabelValues(cm.labels[0], cm.labels[1], dir)
		m.ConnFrames.DeleteLabelValues(cm.labels[0], cm.labels[1], dir)
	}
}
