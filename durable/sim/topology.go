package sim

import (
	"fmt"
	"slices"
)

// Topology names a shape of the broker tree.
type Topology string

// The topologies. Every PHB hangs off the top router r1.
const (
	// TopologyFlat: one router, r1, with every SHB below it.
	TopologyFlat Topology = "flat"
	// TopologyDeep: r1 above r2 and r3, r4 below r3; SHBs alternate
	// between r2 and r4, so knowledge crosses two routers (PHB - r1 - r2 -
	// SHB) on one branch and three (PHB - r1 - r3 - r4 - SHB) on the other.
	TopologyDeep Topology = "deep"
)

const topRouter = "r1"

// topology is the broker tree of a run: each router's and SHB's upstream
// neighbour (the top router's is "", its upstream are the PHBs).
type topology struct {
	kind    Topology
	routers []string
	parent  map[string]string
}

func newTopology(kind Topology, shbs int) (topology, error) {
	t := topology{kind: kind, parent: map[string]string{topRouter: ""}}
	switch kind {
	case TopologyFlat:
		t.routers = []string{topRouter}
		for i := range shbs {
			t.parent[shbName(i)] = topRouter
		}
	case TopologyDeep:
		t.routers = []string{"r1", "r2", "r3", "r4"}
		t.parent["r2"], t.parent["r3"], t.parent["r4"] = "r1", "r1", "r3"
		for i := range shbs {
			t.parent[shbName(i)] = []string{"r2", "r4"}[i%2]
		}
	default:
		return topology{}, fmt.Errorf("unknown topology %q (known: %s, %s)", kind, TopologyFlat, TopologyDeep)
	}
	return t, nil
}

// children returns the downstream neighbours of a router, sorted.
func (t topology) children(router string) []string {
	var out []string
	for n, p := range t.parent {
		if p == router {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// upstreamOf returns the neighbour a node's link toward the PHBs leads to:
// its parent, the top router for a PHB, a PHB for the top router.
func (t topology) upstreamOf(w *world, name string) string {
	if w.nodes[name].kind == kindPHB {
		return topRouter
	}
	if p := t.parent[name]; p != "" {
		return p
	}
	return phbName(0)
}

// ParseTopology parses a topology name; "" picks one per seed.
func ParseTopology(s string) (Topology, error) {
	switch t := Topology(s); t {
	case "", TopologyFlat, TopologyDeep:
		return t, nil
	}
	return "", fmt.Errorf("unknown topology %q (known: %s, %s, or empty for one per seed)", s, TopologyFlat, TopologyDeep)
}
