package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/durable"
)

// Fault is one kind of fault the simulator can inject.
type Fault string

// The fault kinds.
const (
	FaultDrop      Fault = "drop"      // broker messages are lost
	FaultDup       Fault = "dup"       // broker messages are duplicated
	FaultReorder   Fault = "reorder"   // broker messages overtake each other
	FaultDelay     Fault = "delay"     // some messages take much longer
	FaultPartition Fault = "partition" // a link is cut for a while
	FaultCrash     Fault = "crash"     // a broker crashes, losing unsynced writes
	FaultReconnect Fault = "reconnect" // subscribers leave and come back, sometimes with older CTs
	FaultRoam      Fault = "roam"      // subscribers come back at another SHB (reconnect anywhere)
	FaultRelease   Fault = "release"   // early release (maxRetain) and dropping absent SHBs are on
	FaultPublisher Fault = "publisher" // publishers lose their connection and resend
	FaultClock     Fault = "clock"     // PHB clocks step backwards (also across restarts)
	// FaultBlock blocks a broker link for a while: what is sent on it
	// meanwhile waits, in order, and goes when the block ends (a full
	// lane, a stalled neighbour), where a partition loses it.
	FaultBlock Fault = "block"
	// FaultWipe restarts an SHB with an empty disk: its registry, PFS
	// and latestDelivered are gone, and its subscribers come back
	// presenting their CTs (as to an SHB that never knew them).
	FaultWipe Fault = "wipe"
	// FaultFull fills a PHB's or an SHB's disk for a while: its batch
	// fails and is retried (durable.Host.Fail and Retry, as the router's
	// driver does), its messages wait, and a PHB refuses publishes
	// meanwhile (the publishers hold back and resend).
	FaultFull Fault = "full"
	// FaultOutage takes an SHB down early in the chaos phase until it
	// ends, while most events are published (a long outage, or a router
	// that left the mesh and came back); FaultJoin starts an SHB only
	// partway through it, with an empty disk (a router joining the mesh).
	FaultOutage Fault = "outage"
	FaultJoin   Fault = "join"
	// FaultMembers changes a replicated pubend's replicas during the
	// chaos phase: its leader replaced, or removed and a replica added
	// (members.go).
	FaultMembers Fault = "members"
	// FaultSlow is a loaded machine, throughout the run: every broker
	// sync (replicas' aside) takes 20-100 ms and every broker link 15-60
	// ms, so a round trip always takes longer than a router's
	// NackTimeout; routers cache only a few runs, so the answers to an
	// outage's nacks come from the PHB over such round trips.
	FaultSlow Fault = "slow"
)

// AllFaults lists the fault kinds "all" means. FaultBlock, FaultWipe,
// FaultFull, FaultOutage, FaultJoin, FaultMembers and FaultSlow are named on their own (each draws from its own source, so adding them
// left every other fault's seeds as they were).
var AllFaults = []Fault{FaultDrop, FaultDup, FaultReorder, FaultDelay, FaultPartition,
	FaultCrash, FaultReconnect, FaultRoam, FaultRelease, FaultPublisher, FaultClock}

// knownFaults lists every fault kind.
var knownFaults = append(slices.Clone(AllFaults), FaultBlock, FaultWipe, FaultFull, FaultOutage, FaultJoin, FaultMembers, FaultSlow)

// ParseFaults parses a comma-separated list of fault names; "all" means
// every fault and "none" or "" none.
func ParseFaults(s string) ([]Fault, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "all":
		return slices.Clone(AllFaults), nil
	case "", "none":
		return nil, nil
	}
	var fs []Fault
	for _, name := range strings.Split(s, ",") {
		f := Fault(strings.TrimSpace(name))
		if !slices.Contains(knownFaults, f) {
			return nil, fmt.Errorf("unknown fault %q (known: %s, all, none)", name, FaultNames())
		}
		if !slices.Contains(fs, f) {
			fs = append(fs, f)
		}
	}
	return fs, nil
}

// FaultNames returns the fault names joined by commas.
func FaultNames() string {
	names := make([]string, len(knownFaults))
	for i, f := range knownFaults {
		names[i] = string(f)
	}
	return strings.Join(names, ",")
}

// Config describes one simulated run. Zero fields take the defaults given.
type Config struct {
	Seed uint64
	// Events is the number of events published in all (default 40).
	Events int
	// Faults lists the faults to inject.
	Faults []Fault
	// Topology is the shape of the broker network; empty picks one from
	// the seed (flat for a third of the seeds, deep for four ninths,
	// chain and tree for a ninth each).
	Topology Topology
	// Pubends (default 2), SHBs (default 2 flat, 3 deep), Publishers
	// (default 3) and Subscribers (default 6) size the run.
	Pubends, SHBs, Publishers, Subscribers int
	// MaxRetain is the early-release age when FaultRelease is on (default
	// 40 ms).
	MaxRetain durable.Tick
	// DropAfter is how long a PHB waits for an absent SHB's report before
	// dropping it (rule PHB 6), when FaultRelease is on (default 70 ms).
	DropAfter durable.Tick
	// WipeGrace is how long a PHB holds release for a wiped SHB's
	// previous store (PubendConfig.WipeGrace; default 2 s, longer than
	// any subscriber of a run stays away).
	WipeGrace durable.Tick
	// HealTime bounds the time allowed to catch up after the faults stop
	// (default 30 s of simulated time).
	HealTime durable.Tick
	// StepCost is the simulated time a broker is busy per message it
	// steps (default 20 us); messages that arrive meanwhile wait in its
	// inbox, in order. LinkCost is the time a broker link takes to
	// transmit one message (default 5 us: 200,000 messages/s per direction);
	// a burst queues behind it. Negative values turn them off (free steps,
	// links of unlimited capacity).
	StepCost, LinkCost durable.Tick
	// LearnSHBs starts every pubend knowing no SHB: it learns them from
	// their installs and reports (PubendConfig.LearnSHBs), as in a mesh
	// before its directory has converged.
	LearnSHBs bool
	// Replicas, if above 1, replicates each pubend on that many PHB
	// replicas with Raft (package durable/replica; see replicas.go).
	Replicas int
	// Trace, if set, receives every delivered message and fault.
	Trace func(string)
}

func (c *Config) populate() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Events, 40)
	def(&c.Pubends, 2)
	if c.Topology == "" {
		switch c.Seed % 3 {
		case 0:
			c.Topology = TopologyFlat
		case 1:
			c.Topology = TopologyDeep
		default:
			c.Topology = []Topology{TopologyDeep, TopologyChain, TopologyTree}[c.Seed/3%3]
		}
	}
	if c.Topology != TopologyFlat {
		def(&c.SHBs, 3)
	}
	def(&c.SHBs, 2)
	def(&c.Publishers, 3)
	def(&c.Subscribers, 6)
	if c.MaxRetain <= 0 {
		c.MaxRetain = 40_000
	}
	if c.DropAfter <= 0 {
		c.DropAfter = 70_000
	}
	if c.StepCost == 0 {
		c.StepCost = 20
	}
	if c.LinkCost == 0 {
		c.LinkCost = 5
	}
	if c.WipeGrace <= 0 {
		c.WipeGrace = 2_000_000
	}
	if c.HealTime <= 0 {
		c.HealTime = 30_000_000
	}
}

func (c *Config) has(f Fault) bool { return slices.Contains(c.Faults, f) }

// FaultList renders faults as a comma-separated list ("none" if empty).
func FaultList(fs []Fault) string {
	if len(fs) == 0 {
		return "none"
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, ",")
}
