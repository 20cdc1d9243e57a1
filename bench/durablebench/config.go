package durablebench

import (
	"errors"
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/bench"
)

// Config is one benchmark: the systems, the topology, the load and the
// shape. A zero field takes the default written beside it.
type Config struct {
	// Systems run one after another in every run, the order reversed on
	// odd runs, so each sees the same share of the machine's changing load.
	Systems []System
	// Topology places the brokers (default: PHB - SHB, one SHB).
	Topology Topology
	// Subscribers is the number of durable subscribers (default 100),
	// spread over the SHBs round robin.
	Subscribers int
	// Groups splits the events: subscriber i takes group i mod Groups, and
	// event s belongs to group s mod Groups (default 10: each subscriber
	// matches 10% of the events).
	Groups int
	// Publishers is the number of durable publishers (default 100), each
	// keeping up to InFlight publishes unacknowledged (default 64).
	Publishers, InFlight int
	// Events is the number of events of the throughput phase (default
	// 20,000); Payload the bytes of each event's payload attribute
	// (default 200).
	Events, Payload int
	// Churn disconnects subscribers during the throughput phase (zero: off).
	Churn Churn
	// LatencyEvents (default 2,000) are published one at a time at Rate
	// events/s (default 100) in the latency phase.
	LatencyEvents int
	Rate          float64
	// CatchupEvents is the backlog of the catch-up phase (0: no phase).
	CatchupEvents int
	// RestartSHB makes the catch-up phase stop and restart the first SHB
	// router (Sift only) instead of disconnecting its subscribers.
	RestartSHB bool
	// AckEvery is how many messages a subscriber consumes between
	// acknowledgements (default 64); it also acknowledges what it consumed
	// AckIdle after its last acknowledgement (default 20ms).
	AckEvery int
	AckIdle  time.Duration
	// Runs is the number of alternating runs (default 3).
	Runs int
	// Stall fails a phase when nothing is delivered for this long while
	// deliveries are missing (default 60s).
	Stall time.Duration
	// Seed seeds the payloads.
	Seed uint64
	// Dir holds the clusters' certificates and stores (default: a temporary
	// folder, removed at the end).
	Dir string
	// ProfileDir, if set, receives CPU profiles of each run's phases:
	// SYSTEM-runN.pprof (throughput), SYSTEM-runN-latency.pprof and
	// SYSTEM-runN-catchup.pprof.
	ProfileDir string
	// Command is recorded in the report.
	Command string
	// Progress, if set, is told when each run starts and ends.
	Progress func(Progress)
}

// Topology is where the brokers sit. Hops routers form a chain r0 - r1 -
// ... (r0 hosts the pubend, the last router is the first SHB); a second
// SHB hangs off the router before the last. Every router is a member of
// the durable mesh.
type Topology struct {
	// Hops is the number of routers on the PHB-to-SHB path, PHB and SHB
	// included (default 2; 5 is the PHB, 3 intermediate, SHB).
	Hops int
	// SHBs is 1 or 2 (default 1).
	SHBs int
}

// Routers returns the number of routers of the topology.
func (t Topology) Routers() int { return t.Hops + t.SHBs - 1 }

// SHB returns the router index of SHB i.
func (t Topology) SHB(i int) int { return t.Hops - 1 + i }

// Churn is the seed's disconnection pattern: every subscriber goes away
// for For every Every, the subscribers' schedules staggered evenly over
// the period (the seed: 5 s every 30 s).
type Churn struct {
	Every, For time.Duration
}

// On reports whether subscribers disconnect.
func (c Churn) On() bool { return c.Every > 0 && c.For > 0 }

// Progress reports how far a benchmark is.
type Progress = bench.Progress

func (c Config) withDefaults() Config {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.Topology.Hops, 2)
	def(&c.Topology.SHBs, 1)
	def(&c.Subscribers, 100)
	def(&c.Groups, 10)
	def(&c.Publishers, 100)
	def(&c.InFlight, 64)
	def(&c.Events, 20_000)
	def(&c.Payload, 200)
	def(&c.LatencyEvents, 2_000)
	def(&c.AckEvery, 64)
	def(&c.Runs, 3)
	if c.Rate == 0 {
		c.Rate = 100
	}
	if c.AckIdle == 0 {
		c.AckIdle = 20 * time.Millisecond
	}
	if c.Stall == 0 {
		c.Stall = 60 * time.Second
	}
	return c
}

// Validate reports why the configuration (after defaults) cannot run.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case len(c.Systems) == 0:
		return errors.New("no system to run")
	case c.Topology.Hops < 2 || c.Topology.Hops > 8:
		return fmt.Errorf("%d hops outside [2, 8] (PHB and SHB at least)", c.Topology.Hops)
	case c.Topology.SHBs < 1 || c.Topology.SHBs > 2:
		return fmt.Errorf("%d SHBs outside [1, 2]", c.Topology.SHBs)
	case c.Subscribers < 1 || c.Subscribers > 10_000:
		return fmt.Errorf("%d subscribers outside [1, 10000]", c.Subscribers)
	case c.Groups < 1 || c.Groups > c.Subscribers:
		return fmt.Errorf("%d groups outside [1, subscribers=%d]", c.Groups, c.Subscribers)
	case c.Publishers < 1 || c.Publishers > 1000:
		return fmt.Errorf("%d publishers outside [1, 1000]", c.Publishers)
	case c.InFlight < 1 || c.AckEvery < 1:
		return errors.New("in-flight and ack-every must be at least 1")
	case c.Events < 1 || c.LatencyEvents < 1 || c.Runs < 1 || c.CatchupEvents < 0:
		return errors.New("events, latency events and runs must be at least 1, catch-up events at least 0")
	case c.Payload < 0 || c.Payload > 1<<16:
		return fmt.Errorf("payload %d bytes outside [0, 65536]", c.Payload)
	case !(c.Rate > 0 && c.Rate <= 1e5):
		return fmt.Errorf("rate %v outside (0, 1e5] events/s", c.Rate)
	case c.Stall < 0 || c.AckIdle < 0 || c.Churn.Every < 0 || c.Churn.For < 0:
		return errors.New("negative duration")
	case c.Churn.On() && c.Churn.For >= c.Churn.Every:
		return fmt.Errorf("disconnections of %v every %v never end", c.Churn.For, c.Churn.Every)
	}
	return bench.DistinctSystems(c.Systems)
}
