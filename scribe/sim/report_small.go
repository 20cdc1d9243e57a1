package sim

import (
	"fmt"
	"io"
	"strconv"

	"github.com/sift-pubsub/sift/scribe"
)

// SmallReport measures many small groups, where trees grow long unbranched
// paths of non-member forwarders, with and without collapsing them.
type SmallReport struct {
	Nodes      int     `json:"nodes"`
	Groups     int     `json:"groups"`
	GroupSize  int     `json:"group_size"`
	Seed       uint64  `json:"seed"`
	TreeNodes  float64 `json:"tree_nodes"`
	Forwarders float64 `json:"non_member_forwarders"`
	// CollapsedTreeNodes and CollapsedForwarders are the same after collapsing.
	CollapsedTreeNodes  float64    `json:"collapsed_tree_nodes"`
	CollapsedForwarders float64    `json:"collapsed_non_member_forwarders"`
	Scribe              LinkStress `json:"link_stress_scribe"`
	Collapsed           LinkStress `json:"link_stress_collapsed"`
	Unicast             LinkStress `json:"link_stress_unicast"`
	IPMulticast         LinkStress `json:"link_stress_ip_multicast"`
	CollapseMessages    int64      `json:"collapse_messages"`
	// PerGroup holds, for Scribe, Scribe collapsed and naive unicast, the
	// mean over groups of each group's mean stress on the links it used
	// (IP multicast's is 1 by definition).
	PerGroupScribe    float64 `json:"per_group_stress_scribe"`
	PerGroupCollapsed float64 `json:"per_group_stress_collapsed"`
	PerGroupUnicast   float64 `json:"per_group_stress_unicast"`
}

// Small-groups experiment defaults, as in the paper.
const (
	SmallGroups    = 30000
	SmallGroupSize = 11
)

// RunSmall attaches o.Nodes nodes (default 50,000; 128-bit ids, b=4,
// |L|=16) to the paper's transit-stub topology, has 30,000 groups of 11
// random members join, multicasts once from every root, then collapses every
// single-child non-member forwarder (node by node) and multicasts again.
// Link stress is compared with naive unicast from the root to each member.
func RunSmall(o Options) (*SmallReport, error) {
	o.defaults(50000, 128, 4, 16, 32)
	net, err := NewTransitStub(o.rng(streamTopology), o.topology(), o.Nodes)
	if err != nil {
		return nil, fmt.Errorf("small report: %w", err)
	}
	s, err := o.staticSim(o.config(), net)
	if err != nil {
		return nil, fmt.Errorf("small report: %w", err)
	}
	groups, size := SmallGroups, SmallGroupSize
	if o.GroupCount > 0 {
		groups = o.GroupCount
	}
	if o.Size > 0 {
		size = o.Size
	}
	rep := &SmallReport{Nodes: o.Nodes, Groups: groups, GroupSize: size, Seed: o.Seed}
	r := o.rng(streamGroups)
	keys := make([]scribe.ID, groups)
	members := make([][]scribe.Addr, groups)
	sc, uni, ip := newStress(net), newStress(net), newStress(net)
	gsc, guni, gcol := newGroupStress(), newGroupStress(), newGroupStress()
	for g := range groups {
		keys[g] = newGroup(s, r, "group-"+strconv.Itoa(g))
		members[g] = sample(r, o.Nodes, size)
		joinAll(s, keys[g], members[g])
		tm := measureTree(s, keys[g], members[g], func(from, to scribe.Addr) {
			sc.unicast(net, from, to)
			gsc.unicast(net, from, to)
		})
		if err := tm.check(s, keys[g], members[g]); err != nil {
			return nil, fmt.Errorf("small report: group %d: %w", g, err)
		}
		gsc.endGroup()
		rep.TreeNodes += float64(tm.nodes)
		rep.Forwarders += float64(tm.nodes - len(members[g]))
		ip.ipMulticast(net, tm.root, members[g])
		for _, m := range members[g] {
			if m != tm.root {
				uni.unicast(net, tm.root, m)
				guni.unicast(net, tm.root, m)
			}
		}
		guni.endGroup()
		if (g+1)%5000 == 0 {
			o.progress("small: %d of %d groups joined", g+1, groups)
		}
	}
	before := s.TotalSent(scribe.KindCollapse, scribe.KindNewParent)
	for a := range s.Nodes {
		s.Do(scribe.Addr(a), func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Collapse(now, out) })
		s.Run()
	}
	rep.CollapseMessages = s.TotalSent(scribe.KindCollapse, scribe.KindNewParent) - before
	o.progress("small: collapsed with %d messages", rep.CollapseMessages)
	col := newStress(net)
	for g := range groups {
		tm := measureTree(s, keys[g], members[g], func(from, to scribe.Addr) {
			col.unicast(net, from, to)
			gcol.unicast(net, from, to)
		})
		if err := tm.check(s, keys[g], members[g]); err != nil {
			return nil, fmt.Errorf("small report: group %d after collapsing: %w", g, err)
		}
		gcol.endGroup()
		rep.CollapsedTreeNodes += float64(tm.nodes)
		rep.CollapsedForwarders += float64(tm.nodes - len(members[g]))
	}
	k := float64(groups)
	rep.TreeNodes, rep.Forwarders = rep.TreeNodes/k, rep.Forwarders/k
	rep.CollapsedTreeNodes, rep.CollapsedForwarders = rep.CollapsedTreeNodes/k, rep.CollapsedForwarders/k
	rep.Scribe, rep.Collapsed, rep.Unicast, rep.IPMulticast = sc.summary(), col.summary(), uni.summary(), ip.summary()
	rep.PerGroupScribe, rep.PerGroupCollapsed, rep.PerGroupUnicast = gsc.mean(), gcol.mean(), guni.mean()
	return rep, nil
}

// WriteText implements Report.
func (r *SmallReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d groups of %d on %d nodes (transit-stub), seed %d\n", r.Groups, r.GroupSize, r.Nodes, r.Seed)
	fmt.Fprintf(w, "tree nodes per group %.1f (%.1f non-member forwarders); after collapsing %.1f (%.1f), %d collapse messages\n\n",
		r.TreeNodes, r.Forwarders, r.CollapsedTreeNodes, r.CollapsedForwarders, r.CollapseMessages)
	row := func(name string, ls LinkStress, perGroup float64) []string {
		return append(stressRow(name, ls), f2(perGroup))
	}
	return writeTable(w, []string{"link stress, one message per group", "mean (used links)", "mean (all links)", "max", "links used",
		"per-group mean (used links)"},
		[][]string{
			row("Scribe", r.Scribe, r.PerGroupScribe),
			row("Scribe, collapsed", r.Collapsed, r.PerGroupCollapsed),
			row("naive unicast", r.Unicast, r.PerGroupUnicast),
			row("IP multicast", r.IPMulticast, 1),
		})
}
