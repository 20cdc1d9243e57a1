package durablebench

import (
	"github.com/sift-pubsub/sift/bench"
	netbench "github.com/sift-pubsub/sift/bench/net"
)

// Result is one run of one system.
type Result struct {
	bench.RunID
	// Throughput phase: Events published; AckSeconds from the first
	// publish to the last acknowledgement, Seconds to the last delivery;
	// Deliveries checked (each subscriber got exactly its group's events).
	Events        int     `json:"events"`
	Deliveries    int64   `json:"deliveries"`
	AckSeconds    float64 `json:"ack_seconds"`
	Seconds       float64 `json:"seconds"`
	AckedPerSec   float64 `json:"acked_publishes_per_second"`
	DeliveredPerS float64 `json:"delivered_events_per_second"`
	// CPUSeconds is the whole process's CPU time in the throughput phase.
	CPUSeconds float64 `json:"cpu_seconds"`
	// Disconnections is how many subscriber disconnections the churn made.
	Disconnections int `json:"disconnections"`
	// Loaded is the throughput phase's latency (queueing and churn
	// included); Paced the latency phase's at a low fixed rate.
	Loaded Latency `json:"latency_loaded"`
	Paced  Latency `json:"latency_paced"`
	// Catch-up phase (zero when off): Backlog deliveries made after the
	// subscribers came back, in CatchupSeconds (from their return to the
	// last delivery), the first of them CatchupFirstSeconds after their
	// return (reconnecting and the first fetches: the phase's start-up);
	// CatchupCPU seconds.
	Backlog             int64   `json:"catchup_deliveries,omitempty"`
	CatchupSeconds      float64 `json:"catchup_seconds,omitempty"`
	CatchupFirstSeconds float64 `json:"catchup_first_delivery_seconds,omitempty"`
	CatchupPerSec       float64 `json:"catchup_deliveries_per_second,omitempty"`
	CatchupCPU          float64 `json:"catchup_cpu_seconds,omitempty"`
	// Redelivered counts repeated deliveries (always 0 for Sift, whose run
	// fails on one).
	Redelivered int64 `json:"redelivered"`
}

// Latency summarises a latency histogram, in microseconds.
type Latency = netbench.Latency

// CPUPerDelivery is the CPU microseconds per delivered event in the
// throughput phase.
func (r Result) CPUPerDelivery() float64 {
	if r.Deliveries == 0 {
		return 0
	}
	return r.CPUSeconds * 1e6 / float64(r.Deliveries)
}

// CatchupCPUPerDelivery is the CPU microseconds per catch-up delivery.
func (r Result) CatchupCPUPerDelivery() float64 {
	if r.Backlog == 0 {
		return 0
	}
	return r.CatchupCPU * 1e6 / float64(r.Backlog)
}
