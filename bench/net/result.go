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
	// Transport is what the publishing connections' transport did in the
	// throughput phase, for systems whose publishers report it (Sift's
	// QUIC connections); nil for the others.
	Transport *TransportStats `json:"publisher_transport,omitempty"`
	// PacedTransport is the same for the latency phase's publisher.
	PacedTransport *TransportStats `json:"paced_publisher_transport,omitempty"`
}

// TransportStats counts the packets of the throughput phase's publishing
// connections, summed over them. A packet declared lost shrinks QUIC's
// congestion window, so losses on loopback (a receive buffer overflowing,
// or a receiver descheduled past the loss-detection timers) throttle
// throughput where TCP would not.
type TransportStats struct {
	PacketsSent     uint64 `json:"packets_sent"`
	PacketsLost     uint64 `json:"packets_lost"`
	PacketsReceived uint64 `json:"packets_received"`
	// CongestionWindow is the smallest of the connections' windows at the
	// end of the phase, in bytes; SmoothedRTT the largest smoothed RTT, in
	// microseconds.
	CongestionWindow uint64  `json:"congestion_window_bytes"`
	SmoothedRTT      float64 `json:"smoothed_rtt_us"`
}

// LossRate is the share of the packets sent that were declared lost.
func (t *TransportStats) LossRate() float64 {
	if t == nil || t.PacketsSent == 0 {
		return 0
	}
	return float64(t.PacketsLost) / float64(t.PacketsSent)
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
