package netbench

import (
	"errors"
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/bench"
	"github.com/sift-pubsub/sift/bench/workload"
)

// Config is one benchmark: a workload, the systems to compare, the
// topology and the measurement options. A zero field takes the default
// written beside it.
type Config struct {
	// Workload generates the events and subscribers (Seed seeds it).
	Workload workload.NetConfig
	Seed     uint64
	// Systems are run one after another in every run, the order reversed
	// on odd runs, so each system sees the same share of the machine's
	// changing load.
	Systems []System
	// Routers is the size of each system's cluster (default 3):
	// publishers connect to the first router, subscribers to the last.
	Routers int
	// Publishers is the number of publishing connections in the
	// throughput phase (default 1).
	Publishers int
	// Events is the fewest events published in the throughput phase, and
	// the lap of prebuilt events it cycles over (default: the workload's
	// event count).
	Events int
	// Duration is the shortest throughput phase: publishing goes on past
	// Events until it has lasted this long (default 2s), so that a fast
	// system is not measured over a few tens of milliseconds.
	Duration time.Duration
	// Window is the most events in flight end to end in the throughput
	// phase: a publisher waits until every delivery expected for events
	// older than Window has arrived (default 20,000, and below Events).
	// The same window holds for every system, so none is measured while
	// dropping.
	Window int
	// Rate and LatencyEvents shape the latency phase: LatencyEvents
	// (default 10,000) published one at a time at Rate events/s (default
	// 2,000), far below saturation.
	Rate          float64
	LatencyEvents int
	// Runs is the number of alternating runs (default 3).
	Runs int
	// Stall fails a run when no delivery arrives for this long while
	// some are expected (default 30s), and any step of a run (starting,
	// subscribing, publishing, closing) that makes no progress for a
	// quarter longer (watchdog.go).
	Stall time.Duration
	// Dir holds the clusters' certificates and data (default: a
	// temporary folder, removed at the end).
	Dir string
	// ProfileDir, if set, receives a CPU profile of each run's
	// throughput phase: SYSTEM-runN.pprof (go tool pprof -top FILE).
	ProfileDir string
	// Command is recorded in the report.
	Command string
	// Progress, if set, is told when each run starts and ends.
	Progress func(Progress)
}

// Progress reports how far a benchmark is.
type Progress = bench.Progress

func (c Config) withDefaults() Config {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	c.Workload = c.Workload.Resolved()
	def(&c.Routers, 3)
	def(&c.Publishers, 1)
	def(&c.Events, c.Workload.Events)
	def(&c.Window, 20_000)
	def(&c.LatencyEvents, 10_000)
	def(&c.Runs, 3)
	if c.Rate == 0 {
		c.Rate = 2000
	}
	if c.Duration == 0 {
		c.Duration = 2 * time.Second
	}
	if c.Stall == 0 {
		c.Stall = 30 * time.Second
	}
	return c
}

// Validate reports why the configuration (after defaults) cannot run.
func (c Config) Validate() error {
	c = c.withDefaults()
	if err := c.Workload.Validate(); err != nil {
		return err
	}
	switch {
	case len(c.Systems) == 0:
		return errors.New("no system to run")
	case c.Routers < 1 || c.Routers > 16:
		return fmt.Errorf("%d routers outside [1, 16]", c.Routers)
	case c.Publishers < 1 || c.Publishers > 64:
		return fmt.Errorf("%d publishers outside [1, 64]", c.Publishers)
	case c.Events < 1 || c.Window < 1 || c.LatencyEvents < 1 || c.Runs < 1:
		return errors.New("events, window, latency events and runs must be at least 1")
	case !(c.Rate > 0 && c.Rate <= 1e6):
		return fmt.Errorf("rate %v outside (0, 1e6] events/s", c.Rate)
	case c.Window >= c.Events:
		return fmt.Errorf("window %d must be below events %d (the lap the throughput phase cycles over)", c.Window, c.Events)
	case c.Stall < 0 || c.Duration < 0:
		return errors.New("negative stall timeout or duration")
	}
	return bench.DistinctSystems(c.Systems)
}
