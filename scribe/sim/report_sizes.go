package sim

import (
	"fmt"
	"io"
	"strconv"

	"github.com/sift-pubsub/sift/scribe"
)

// SizesRow is one group size of the sizes report, averaged over its groups.
type SizesRow struct {
	GroupSize           int     `json:"group_size"`
	TreeNodes           float64 `json:"tree_nodes"`
	NonMemberForwarders float64 `json:"non_member_forwarders"`
	RootChildren        float64 `json:"root_children"`
	MostChildren        float64 `json:"most_children"`
	EdgesPerMember      float64 `json:"edges_per_member"`
	DistanceRatio       float64 `json:"distance_ratio"`
}

// SizesReport reproduces the seed's Example 4: where the load of a group's
// tree lands, by group size.
type SizesReport struct {
	Nodes          int        `json:"nodes"`
	IDBits         int        `json:"id_bits"`
	B              int        `json:"b"`
	Leaf           int        `json:"leaf"`
	GroupsPerSize  int        `json:"groups_per_size"`
	Seed           uint64     `json:"seed"`
	Rows           []SizesRow `json:"rows"`
	MessagesJoined int64      `json:"join_messages"`
}

// RunSizes builds a static overlay of o.Nodes nodes in a 1000x1000 plane
// (defaults: 4,096 nodes, 32-bit ids, b=4, |L|=16, |M|=32, 30 groups per size,
// sizes 11, 100, 1000, 4096), then for each size creates o.Groups groups
// with random creators, has random members join them one at a time, and
// multicasts once from each root. Per size it averages over the groups:
// tree nodes, non-member forwarders (tree nodes that are not members, the
// root included), the root's children, the most children on one node, tree
// edges per member, and the tree's total distance over the root's direct
// distance to every member.
func RunSizes(o Options) (*SizesReport, error) {
	o.defaults(4096, 32, 4, 16, 32)
	if o.Groups == 0 {
		o.Groups = 30
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []int{11, 100, 1000, 4096}
	}
	for _, size := range o.Sizes {
		if size < 1 || size > o.Nodes {
			return nil, fmt.Errorf("sizes report: group size %d: want 1..%d (the node count)", size, o.Nodes)
		}
	}
	s, err := o.staticSim(o.config(), NewPlane(o.rng(streamTopology), o.Nodes, 1000))
	if err != nil {
		return nil, fmt.Errorf("sizes report: %w", err)
	}
	rep := &SizesReport{Nodes: o.Nodes, IDBits: s.Cfg.Bits, B: s.Cfg.B, Leaf: s.Cfg.Leaf, GroupsPerSize: o.Groups, Seed: o.Seed}
	r := o.rng(streamGroups)
	for _, size := range o.Sizes {
		var row SizesRow
		row.GroupSize = size
		for g := range o.Groups {
			key := newGroup(s, r, "group-"+strconv.Itoa(size)+"-"+strconv.Itoa(g))
			members := sample(r, o.Nodes, size)
			joinAll(s, key, members)
			tm := measureTree(s, key, members, nil)
			if err := tm.check(s, key, members); err != nil {
				return nil, fmt.Errorf("sizes report: size %d group %d: %w", size, g, err)
			}
			row.TreeNodes += float64(tm.nodes)
			row.NonMemberForwarders += float64(tm.nodes - len(members))
			row.RootChildren += float64(tm.rootChildren)
			row.MostChildren += float64(tm.mostChildren)
			row.EdgesPerMember += float64(tm.edges) / float64(len(members))
			if tm.unicastDelay > 0 {
				row.DistanceRatio += float64(tm.treeDelay) / float64(tm.unicastDelay)
			}
		}
		k := float64(o.Groups)
		row.TreeNodes /= k
		row.NonMemberForwarders /= k
		row.RootChildren /= k
		row.MostChildren /= k
		row.EdgesPerMember /= k
		row.DistanceRatio /= k
		rep.Rows = append(rep.Rows, row)
		o.progress("sizes: %d groups of %d done", o.Groups, size)
	}
	rep.MessagesJoined = s.Sent[scribe.KindJoin]
	return rep, nil
}

// WriteText implements Report.
func (r *SizesReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d nodes in the plane, %d-bit ids, b=%d, |L|=%d, %d groups per size, seed %d\n\n",
		r.Nodes, r.IDBits, r.B, r.Leaf, r.GroupsPerSize, r.Seed)
	rows := make([][]string, 0, len(r.Rows))
	for _, x := range r.Rows {
		rows = append(rows, []string{strconv.Itoa(x.GroupSize), f1(x.TreeNodes), f1(x.NonMemberForwarders),
			f1(x.RootChildren), f1(x.MostChildren), f2(x.EdgesPerMember), f2(x.DistanceRatio)})
	}
	return writeTable(w, []string{"group size", "tree nodes", "non-member forwarders", "root children",
		"most children on one node", "edges per member", "tree distance / root unicasts"}, rows)
}

// check verifies that the multicast reached every member exactly once.
func (tm *treeMeasure) check(s *Sim, key scribe.ID, members []scribe.Addr) error {
	if tm.duplicates > 0 || tm.delivered != len(members) {
		return fmt.Errorf("group %s: multicast delivered %d times (%d duplicates) to %d members",
			s.Cfg.Space().Format(key), tm.delivered, tm.duplicates, len(members))
	}
	return nil
}
