package router

import (
	"math"
	"sort"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
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
	latency *latencyHistogram // Latency, with observeN for the writers
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
	// LinkTable are the exact link table's metrics
	// (linktable_metrics.go).
	LinkTable *LinkTableMetrics
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
		latency: newLatencyHistogram("sift_router_publish_to_deliver_seconds",
			"From reading a publish frame to writing the event to a subscriber's stream.",
			prometheus.ExponentialBuckets(10e-6, 2, 18)),
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
	m.Latency = m.latency
	reg.MustRegister(m.EventsIn, m.EventsOut, m.Matches, m.Subscriptions, m.Connections,
		m.SlowConsumers, m.Errors, m.Latency, m.ConnBytes, m.ConnFrames, m.LinkEvents)
	m.Bloom = newBloomMetrics(reg)
	m.Assist = newAssistMetrics(reg)
	m.LinkTable = newLinkTableMetrics(reg)
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

// latencyHistogram is a prometheus.Histogram that also takes n equal
// observations at once (observeN): a writer observes the latency once per
// run of deliveries read in the same publish frame (they share the read
// time, so the same latency), not once per delivery. A scrape sums the
// buckets it reads, so its count always agrees with its buckets; the sum
// may trail them by observations in flight.
type latencyHistogram struct {
	desc    *prometheus.Desc
	upper   []float64       // bucket upper bounds, ascending
	counts  []atomic.Uint64 // per bucket, then +Inf
	sumBits atomic.Uint64   // float64 bits of the sum of observations
}

func newLatencyHistogram(name, help string, buckets []float64) *latencyHistogram {
	return &latencyHistogram{
		desc:   prometheus.NewDesc(name, help, nil, nil),
		upper:  buckets,
		counts: make([]atomic.Uint64, len(buckets)+1),
	}
}

// Observe adds one observation.
func (h *latencyHistogram) Observe(v float64) { h.observeN(v, 1) }

// observeN adds n observations of v.
func (h *latencyHistogram) observeN(v float64, n uint64) {
	h.counts[sort.SearchFloat64s(h.upper, v)].Add(n) // the first bucket with v <= upper
	for {
		old := h.sumBits.Load()
		sum := math.Float64bits(math.Float64frombits(old) + v*float64(n))
		if h.sumBits.CompareAndSwap(old, sum) {
			return
		}
	}
}

// snapshot returns the histogram as a constant metric.
func (h *latencyHistogram) snapshot() prometheus.Metric {
	cum := make(map[float64]uint64, len(h.upper))
	var total uint64
	for i, u := range h.upper {
		total += h.counts[i].Load()
		cum[u] = total
	}
	total += h.counts[len(h.upper)].Load()
	return prometheus.MustNewConstHistogram(h.desc, total, math.Float64frombits(h.sumBits.Load()), cum)
}

// Desc, Write, Describe and Collect make it a prometheus.Metric and
// Collector.
func (h *latencyHistogram) Desc() *prometheus.Desc              { return h.desc }
func (h *latencyHistogram) Write(m *dto.Metric) error           { return h.snapshot().Write(m) }
func (h *latencyHistogram) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }
func (h *latencyHistogram) Collect(ch chan<- prometheus.Metric) { ch <- h.snapshot() }
