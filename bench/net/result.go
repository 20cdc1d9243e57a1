package netbench

import (
	"time"

	"github.com/sift-pubsub/sift/bench"
)

// Result is one run of one system.
type Result struct {
	bench.RunID
	// Throughput phase: Events published, Deliveries expected and
	// checked (every subscriber got exactly its matching events), in
	// Seconds from the first publish to the last delivery (the run's
	// duration, at least Config.Duration).
	Events           int     `json:"events"`
	Deliveries       int64   `json:"deliveries"`
	Seconds          float64 `json:"seconds"`
	EventsPerSec     float64 `json:"events_per_second"`
	DeliveriesPerSec float64 `json:"deliveries_per_second"`
	// CPUSeconds is the whole process's CPU time in the throughput phase:
	// every router, client library and subscriber application (for NATS
	// on the content workload, the application's own filtering).
	CPUSeconds float64 `json:"cpu_seconds"`
	// WireBytes is what the cluster's connections carried in the
	// throughput phase, counted at WireLayer.
	WireBytes int64  `json:"wire_bytes"`
	WireLayer string `json:"wire_layer,omitempty"`
	// Loaded is the publish-to-deliver latency in the throughput phase
	// (queueing in a full window included), sampled on the one event in
	// 16 stamped there; Paced is the latency phase's (every event), at a
	// low fixed rate.
	Loaded Latency `json:"latency_loaded"`
	Paced  Latency `json:"latency_paced"`
}

// Latency summarises a latency histogram, in microseconds.
type Latency struct {
	Count uint64  `json:"count"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
}

// LatencyOf summarises h.
func LatencyOf(h *Histogram) Latency {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	return Latency{Count: h.Count(), P50: us(h.Quantile(0.5)), P99: us(h.Quantile(0.99)), P999: us(h.Quantile(0.999)), Max: us(h.Max())}
}

// CPUPerDelivery is the CPU microseconds spent per useful delivery.
func (r Result) CPUPerDelivery() float64 {
	if r.Deliveries == 0 || r.CPUSeconds == 0 {
		return 0
	}
	return r.CPUSeconds * 1e6 / float64(r.Deliveries)
}

// DeliveriesPerCPUSecond is useful deliveries per CPU second: what the
// content workload's target compares.
func (r Result) DeliveriesPerCPUSecond() float64 {
	if r.CPUSeconds == 0 {
		return 0
	}
	return float64(r.Deliveries) / r.CPUSeconds
}

// BytesPerDelivery is wire bytes per useful delivery.
func (r Result) BytesPerDelivery() float64 {
	if r.Deliveries == 0 {
		return 0
	}
	return float64(r.WireBytes) / float64(r.Deliveries)
}
