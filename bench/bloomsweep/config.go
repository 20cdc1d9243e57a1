package bloomsweep

import (
	"errors"
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/router/bloomfwd"
)

// Config is one sweep. A zero field takes the default written beside it.
type Config struct {
	// Terms are the attributes per event, hence the terms in each
	// summary (default 10, 50, 200, 1000).
	Terms []int
	// Filters are the filters per link (default 1,000, 10,000, 100,000).
	Filters []int
	// Chains are the chain lengths, in routers, the per-hop figures are
	// combined for (default 3, 5, 7).
	Chains []int
	// Events is the number of distinct events per point (default 2,000).
	Events int
	// Probes is the one-unmet probe filters tested per event for the
	// false-positive rate (default 8).
	Probes int
	// Hit is the share of events some filter of the link should match
	// (default 0.1).
	Hit float64
	// MinCPU is the least CPU each role and mode is timed for in a round
	// (default 100ms); Rounds alternate exact and Bloom (default 3).
	MinCPU time.Duration
	Rounds int
	// Index is the per-link tree, bloomfwd's Config.Index (default
	// sbstree, the routers' default).
	Index string
	// Seed seeds the workload.
	Seed uint64
	// Command is recorded in the report.
	Command string
	// Progress, if set, is told when each point starts (done of total).
	Progress func(done, total int, desc string)
}

// Defaults of Config.
var (
	DefaultTerms   = []int{10, 50, 200, 1000}
	DefaultFilters = []int{1_000, 10_000, 100_000}
	DefaultChains  = []int{3, 5, 7}
)

func (c Config) withDefaults() Config {
	if len(c.Terms) == 0 {
		c.Terms = DefaultTerms
	}
	if len(c.Filters) == 0 {
		c.Filters = DefaultFilters
	}
	if len(c.Chains) == 0 {
		c.Chains = DefaultChains
	}
	if c.Events == 0 {
		c.Events = 2000
	}
	if c.Probes == 0 {
		c.Probes = 8
	}
	if c.Hit == 0 {
		c.Hit = 0.1
	}
	if c.MinCPU == 0 {
		c.MinCPU = 100 * time.Millisecond
	}
	if c.Rounds == 0 {
		c.Rounds = 3
	}
	if c.Index == "" {
		c.Index = bloomfwd.IndexSBSTree
	}
	return c
}

// Validate reports why the configuration (after defaults) cannot run.
func (c Config) Validate() error {
	c = c.withDefaults()
	for _, n := range c.Terms {
		if n < 3 || n > 10_000 {
			return fmt.Errorf("bloom sweep: %d terms per event outside [3, 10000]", n)
		}
	}
	for _, f := range c.Filters {
		if f < 1 || f > 10_000_000 {
			return fmt.Errorf("bloom sweep: %d filters per link outside [1, 1e7]", f)
		}
	}
	for _, l := range c.Chains {
		if l < 2 || l > 64 {
			return fmt.Errorf("bloom sweep: chain of %d routers outside [2, 64]", l)
		}
	}
	switch {
	case c.Events < 10 || c.Events > 1_000_000:
		return fmt.Errorf("bloom sweep: %d events outside [10, 1e6]", c.Events)
	case c.Probes < 1 || c.Probes > 1000:
		return fmt.Errorf("bloom sweep: %d probes outside [1, 1000]", c.Probes)
	case !(c.Hit > 0 && c.Hit < 1):
		return fmt.Errorf("bloom sweep: hit share %v outside (0, 1)", c.Hit)
	case c.MinCPU < 0 || c.Rounds < 1:
		return errors.New("bloom sweep: negative CPU time or no rounds")
	}
	return bloomfwd.Config{Index: c.Index}.Validate()
}
