package sim

import (
	"fmt"
	"io"
	"strconv"

	"github.com/sift-pubsub/sift/scribe"
)

// StateReport shows how much tree state Scribe spreads over the nodes
// against the subscriptions a broker would hold.
type StateReport struct {
	Nodes               int     `json:"nodes"`
	Groups              int     `json:"groups"`
	GroupSize           int     `json:"group_size"`
	Seed                uint64  `json:"seed"`
	ChildrenEntries     Summary `json:"children_entries_per_node"`
	ChildrenTables      Summary `json:"children_tables_per_node"`
	TotalEntries        int     `json:"total_children_entries"`
	BrokerSubscriptions int     `json:"broker_subscriptions"`
	EntriesRatio        float64 `json:"entries_per_subscription"`
	DistinctRoots       int     `json:"distinct_roots"`
	MostRootsOnOneNode  int     `json:"most_roots_on_one_node"`
}

// RunState builds the same network as RunSizes (defaults: 4,096 nodes,
// 32-bit ids, b=4, |L|=16) and has o.GroupCount groups (default 500) of
// o.Size random members (default 100) join, then counts children tables
// and entries on every node, and the distinct roots.
func RunState(o Options) (*StateReport, error) {
	o.defaults(4096, 32, 4, 16, 32)
	if o.GroupCount == 0 {
		o.GroupCount = 500
	}
	if o.Size == 0 {
		o.Size = 100
	}
	if o.Size > o.Nodes {
		return nil, fmt.Errorf("state report: group size %d exceeds the %d nodes", o.Size, o.Nodes)
	}
	s, err := o.staticSim(o.config(), NewPlane(o.rng(streamTopology), o.Nodes, 1000))
	if err != nil {
		return nil, fmt.Errorf("state report: %w", err)
	}
	r := o.rng(streamGroups)
	roots := map[scribe.Addr]int{}
	for g := range o.GroupCount {
		key := newGroup(s, r, "group-"+strconv.Itoa(g))
		joinAll(s, key, sample(r, o.Nodes, o.Size))
		roots[s.ClosestLive(key)]++
		if (g+1)%100 == 0 {
			o.progress("state: %d of %d groups joined", g+1, o.GroupCount)
		}
	}
	rep := &StateReport{Nodes: o.Nodes, Groups: o.GroupCount, GroupSize: o.Size, Seed: o.Seed,
		BrokerSubscriptions: o.GroupCount * o.Size, DistinctRoots: len(roots)}
	entries, tables := make([]float64, len(s.Nodes)), make([]float64, len(s.Nodes))
	for i, n := range s.Nodes {
		t, e := n.ChildrenLoad()
		tables[i], entries[i] = float64(t), float64(e)
		rep.TotalEntries += e
	}
	for _, c := range roots {
		rep.MostRootsOnOneNode = max(rep.MostRootsOnOneNode, c)
	}
	rep.ChildrenEntries, rep.ChildrenTables = summarize(entries), summarize(tables)
	rep.EntriesRatio = float64(rep.TotalEntries) / float64(rep.BrokerSubscriptions)
	return rep, nil
}

// WriteText implements Report.
func (r *StateReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d groups of %d members on %d nodes, seed %d\n\n", r.Groups, r.GroupSize, r.Nodes, r.Seed)
	err := writeTable(w, []string{"per node", "mean", "median", "max"}, [][]string{
		{"children entries", f1(r.ChildrenEntries.Mean), f1(r.ChildrenEntries.Median), fmt.Sprint(r.ChildrenEntries.Max)},
		{"children tables", f1(r.ChildrenTables.Mean), f1(r.ChildrenTables.Median), fmt.Sprint(r.ChildrenTables.Max)},
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\ntotal children entries %d against %d broker subscriptions (%.2fx)\ndistinct roots %d, at most %d groups on one root\n",
		r.TotalEntries, r.BrokerSubscriptions, r.EntriesRatio, r.DistinctRoots, r.MostRootsOnOneNode)
	return err
}
