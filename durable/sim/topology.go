package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sift-pubsub/sift/durable"
)

// Topology names a shape of the broker network.
type Topology string

// The topologies. In the two hierarchies every PHB hangs off the top
// router r1; in the two meshes every router is a siftd: it may host PHBs
// and SHBs, links are undirected, and each pubend's knowledge flows from
// its host router outward, so a link is upstream for the pubends on one
// side of it and downstream for those on the other.
const (
	// TopologyFlat: one router, r1, with every SHB below it.
	TopologyFlat Topology = "flat"
	// TopologyDeep: r1 above r2 and r3, r4 below r3; SHBs alternate
	// between r2 and r4, so knowledge crosses two routers (PHB - r1 - r2 -
	// SHB) on one branch and three (PHB - r1 - r3 - r4 - SHB) on the other.
	TopologyDeep Topology = "deep"
	// TopologyChain: routers r1 - r2 - r3; pubends are spread over the
	// ends first (p1 at r1, p2 at r3, p3 at r2), SHBs round the routers
	// (shb1 at r1, shb2 at r2, shb3 at r3, ...).
	TopologyChain Topology = "chain"
	// TopologyTree: r1 linked to r2 and r3, r3 to r4; pubends at the
	// leaves first (p1 at r2, p2 at r4, p3 at r1), SHBs round the routers.
	TopologyTree Topology = "tree"
)

// Topologies lists every topology.
var Topologies = []Topology{TopologyFlat, TopologyDeep, TopologyChain, TopologyTree}

const topRouter = "r1"

// topology is the broker network of a run. In a hierarchy, parent maps
// each router and SHB to its upstream neighbour (the top router's is "",
// its upstream are the PHBs). In a mesh, parent maps each SHB to its
// router, host each PHB to its router, and adj lists each router's
// neighbour routers.
type topology struct {
	kind    Topology
	routers []string
	parent  map[string]string
	mesh    bool
	host    map[string]string   // PHB -> router (meshes)
	adj     map[string][]string // router -> neighbour routers, sorted (meshes)
}

func newTopology(kind Topology, pubends, shbs int) (topology, error) {
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
	case TopologyChain:
		t.meshOf([]string{"r1", "r2", "r3"}, [][2]string{{"r1", "r2"}, {"r2", "r3"}},
			[]string{"r1", "r3", "r2"}, pubends, shbs)
	case TopologyTree:
		t.meshOf([]string{"r1", "r2", "r3", "r4"}, [][2]string{{"r1", "r2"}, {"r1", "r3"}, {"r3", "r4"}},
			[]string{"r2", "r4", "r1", "r3"}, pubends, shbs)
	default:
		return topology{}, fmt.Errorf("unknown topology %q (known: %s)", kind, topologyNames())
	}
	return t, nil
}

// meshOf sets up a mesh: its routers, links, the routers hosting pubends
// in turn (hosts, cycled) and SHBs round the routers.
func (t *topology) meshOf(routers []string, links [][2]string, hosts []string, pubends, shbs int) {
	t.mesh, t.routers = true, routers
	t.parent = map[string]string{}
	t.host, t.adj = map[string]string{}, map[string][]string{}
	for _, l := range links {
		t.adj[l[0]] = append(t.adj[l[0]], l[1])
		t.adj[l[1]] = append(t.adj[l[1]], l[0])
	}
	for _, r := range routers {
		slices.Sort(t.adj[r])
	}
	for i := range pubends {
		t.host[phbName(i)] = hosts[i%len(hosts)]
	}
	for i := range shbs {
		t.parent[shbName(i)] = routers[i%len(routers)]
	}
}

// nextHop returns the neighbour of router from on the way to router to in
// a mesh (the tree's unique path), or "" if from is to.
func (t topology) nextHop(from, to string) string {
	if from == to {
		return ""
	}
	// Depth-first search from to: the first neighbour of from reached is
	// its next hop toward to.
	seen := map[string]string{to: ""}
	stack := []string{to}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, m := range t.adj[n] {
			if _, ok := seen[m]; ok {
				continue
			}
			seen[m] = n
			if m == from {
				return n
			}
			stack = append(stack, m)
		}
	}
	return ""
}

// children returns the downstream neighbours of a router, sorted: in a
// mesh, its neighbour routers and SHBs.
func (t topology) children(router string) []string {
	var out []string
	for n, p := range t.parent {
		if p == router {
			out = append(out, n)
		}
	}
	out = append(out, t.adj[router]...)
	slices.Sort(out)
	return out
}

// routerConfig configures a router: in a hierarchy the top router takes
// each pubend from its PHB and the others every pubend from their parent;
// in a mesh a router takes a pubend from its PHB if it hosts it, from the
// next hop toward the host otherwise.
func (t topology) routerConfig(name string, pubends int) durable.RouterConfig {
	up := map[string]string{}
	for i := range pubends {
		phb := phbName(i)
		switch {
		case t.mesh && t.host[phb] == name:
			up[pubendName(i)] = phb
		case t.mesh:
			up[pubendName(i)] = t.nextHop(name, t.host[phb])
		case t.parent[name] != "":
			up[pubendName(i)] = t.parent[name]
		default:
			up[pubendName(i)] = phb
		}
	}
	return durable.RouterConfig{Node: name, Upstream: up, Downstream: t.children(name)}
}

// phbRouter returns the router a PHB sends its knowledge to.
func (t topology) phbRouter(phb string) string {
	if t.mesh {
		return t.host[phb]
	}
	return topRouter
}

// linkOf returns a neighbour of a node for a partition to cut: its
// upstream in a hierarchy (a PHB for the top router); in a mesh a PHB's
// host, an SHB's router, or one of a router's neighbour routers.
func (t topology) linkOf(w *world, rng *rand.Rand, name string) string {
	n := w.nodes[name]
	switch {
	case n.kind == kindPHB:
		return t.phbRouter(name)
	case n.kind == kindReplica:
		return t.phbRouter(n.group.phb)
	case t.parent[name] != "":
		return t.parent[name]
	case t.mesh:
		return t.adj[name][rng.IntN(len(t.adj[name]))]
	}
	return phbName(0)
}

// ParseTopology parses a topology name; "" picks one per seed.
func ParseTopology(s string) (Topology, error) {
	t := Topology(s)
	if t == "" || slices.Contains(Topologies, t) {
		return t, nil
	}
	return "", fmt.Errorf("unknown topology %q (known: %s, or empty for one per seed)", s, topologyNames())
}

func topologyNames() string {
	s := ""
	for i, t := range Topologies {
		if i > 0 {
			s += ", "
		}
		s += string(t)
	}
	return s
}
