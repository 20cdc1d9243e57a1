package sim

import (
	"fmt"
	"io"

	"github.com/sift-pubsub/sift/scribe"
)

// FailureCase is one failure and the repair that followed.
type FailureCase struct {
	Scenario       string `json:"scenario"`
	Killed         string `json:"killed"`
	Orphans        int    `json:"orphans"`
	RepairJoins    int64  `json:"repair_joins"`
	PastryRepair   int64  `json:"pastry_repair_messages"`
	Bounces        int64  `json:"bounces"`
	DepthBefore    int    `json:"depth_before"`
	DepthAfter     int    `json:"depth_after"`
	NewRoot        string `json:"root_after"`
	RootHadReplica bool   `json:"root_had_replica"`
	Members        int    `json:"members"`
	Reached        int    `json:"members_reached"`
	ExactlyOnce    bool   `json:"exactly_once"`
}

// FailureReport kills a forwarder, or the root, of a tree and reports the
// repair.
type FailureReport struct {
	Nodes   int           `json:"nodes"`
	IDBits  int           `json:"id_bits"`
	B       int           `json:"b"`
	Leaf    int           `json:"leaf"`
	Members int           `json:"members"`
	Group   string        `json:"group"`
	Seed    uint64        `json:"seed"`
	Cases   []FailureCase `json:"cases"`
}

// FailureMembers is the number of members in the failure report's group, as
// in the seed's Example 1.
const FailureMembers = 8

// RunFailure builds the seed's small network (default 64 nodes in the plane,
// 16-bit ids, b=2, |L|=4, |M|=4) with Pastry's join protocol, message by
// message; node 17 creates "prices" and 8 random nodes join. Then, on two
// identical copies, it kills the forwarder with the most children (a
// non-member if there is one), or the root, lets heartbeats run for ten intervals, and multicasts from the
// (possibly new) root. Repair messages are counted from the failure on.
func RunFailure(o Options) (*FailureReport, error) {
	o.defaults(64, 16, 2, 4, 4)
	rep := &FailureReport{Nodes: o.Nodes, IDBits: o.Bits, B: o.B, Leaf: o.Leaf, Members: FailureMembers, Seed: o.Seed}
	for _, scenario := range []string{"forwarder", "root"} {
		c, err := failureCase(o, scenario, rep)
		if err != nil {
			return nil, fmt.Errorf("failure report (%s): %w", scenario, err)
		}
		rep.Cases = append(rep.Cases, *c)
	}
	return rep, nil
}

func failureCase(o Options, scenario string, rep *FailureReport) (*FailureCase, error) {
	if o.Nodes < FailureMembers+2 || o.Nodes <= 17 {
		return nil, fmt.Errorf("%d nodes: want at least 18", o.Nodes)
	}
	cfg := o.config()
	cfg.HeartbeatInterval = 5000 * PlaneScale // longer than any delay in the 1000x1000 plane
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	net := NewPlane(o.rng(streamTopology), o.Nodes, 1000)
	s, err := New(cfg, net, RandomIDs(o.rng(streamIDs), cfg.Space(), o.Nodes))
	if err != nil {
		return nil, err
	}
	BuildByJoins(s)
	space := cfg.Space()
	key := scribe.GroupID(space, "prices", "node-17")
	rep.Group = space.Format(key)
	s.Do(17, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Create(now, key, out) })
	s.Run()
	members := sample(o.rng(streamGroups), o.Nodes, FailureMembers)
	joinAll(s, key, members)
	root := s.ClosestLive(key)

	victim := root
	if scenario == "forwarder" {
		victim, _ = busiestForwarder(s, key)
		if victim == scribe.NoAddr {
			return nil, fmt.Errorf("the tree has no forwarder with children")
		}
	}
	g, _ := s.Nodes[victim].Group(key)
	c := &FailureCase{Scenario: scenario, Killed: space.Format(s.Nodes[victim].Self().ID), Orphans: len(g.Children),
		DepthBefore: treeDepth(s, key, members)}
	joins := s.TotalSent(scribe.KindJoin, scribe.KindJoinDirect)
	repair := s.TotalSent(scribe.KindLeafRequest, scribe.KindRowRequest, scribe.KindStateReply, scribe.KindAnnounce)
	bounces := s.Bounces
	s.Kill(victim)
	s.RunTicks(s.Now() + 10*cfg.HeartbeatInterval)
	c.RepairJoins = s.TotalSent(scribe.KindJoin, scribe.KindJoinDirect) - joins
	c.PastryRepair = s.TotalSent(scribe.KindLeafRequest, scribe.KindRowRequest, scribe.KindStateReply, scribe.KindAnnounce) - repair
	c.Bounces = s.Bounces - bounces

	live := members[:0:0]
	for _, m := range members {
		if s.Alive(m) {
			live = append(live, m)
		}
	}
	newRoot := s.ClosestLive(key)
	c.NewRoot = space.Format(s.Nodes[newRoot].Self().ID)
	c.RootHadReplica = newRoot == root || s.Nodes[newRoot].HasReplica(key)
	c.DepthAfter = treeDepth(s, key, live)
	tm := measureTree(s, key, live, nil)
	c.Members, c.Reached = len(live), tm.delivered-tm.duplicates
	c.ExactlyOnce = tm.check(s, key, live) == nil
	return c, nil
}

// busiestForwarder returns the non-root tree node with the most children,
// preferring nodes that are not members (as in the seed's Example 3).
func busiestForwarder(s *Sim, key scribe.ID) (scribe.Addr, int) {
	best, most, bestMember := scribe.NoAddr, 0, true
	for a, n := range s.Nodes {
		g, ok := n.Group(key)
		if !ok || g.Root || len(g.Children) == 0 {
			continue
		}
		if better := bestMember && !g.Member || bestMember == g.Member && len(g.Children) > most; better {
			best, most, bestMember = scribe.Addr(a), len(g.Children), g.Member
		}
	}
	return best, most
}

// treeDepth is the most parent hops from a member up to the root (-1 if a
// member's parent chain is broken or loops).
func treeDepth(s *Sim, key scribe.ID, members []scribe.Addr) int {
	depth := 0
	for _, m := range members {
		d, cur := 0, m
		for {
			g, ok := s.Nodes[cur].Group(key)
			if !ok || !s.Alive(cur) || d > len(s.Nodes) {
				return -1
			}
			if g.Root {
				break
			}
			cur = g.Parent.Addr
			d++
		}
		depth = max(depth, d)
	}
	return depth
}

// WriteText implements Report.
func (r *FailureReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d nodes in the plane, %d-bit ids, b=%d, |L|=%d, built by Pastry joins; group %s with %d members, seed %d\n\n",
		r.Nodes, r.IDBits, r.B, r.Leaf, r.Group, r.Members, r.Seed)
	var rows [][]string
	for _, c := range r.Cases {
		rows = append(rows, []string{c.Scenario, c.Killed, fmt.Sprint(c.Orphans), fmt.Sprint(c.RepairJoins),
			fmt.Sprint(c.PastryRepair), fmt.Sprint(c.Bounces), fmt.Sprintf("%d -> %d", c.DepthBefore, c.DepthAfter),
			fmt.Sprintf("%s (replica: %v)", c.NewRoot, c.RootHadReplica),
			fmt.Sprintf("%d/%d", c.Reached, c.Members), fmt.Sprint(c.ExactlyOnce)})
	}
	return writeTable(w, []string{"killed", "node", "orphans", "repair JOINs", "Pastry repair msgs", "bounces",
		"depth", "root after", "members reached", "exactly once"}, rows)
}
