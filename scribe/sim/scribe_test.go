package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/sift-pubsub/sift/scribe"
)

// pricesTree builds the seed's Example 1 on a 64-node network: node 17
// creates "prices" and `members` random nodes join one at a time. It returns
// the group id, the members in join order and the JOIN messages each join
// cost.
func pricesTree(t *testing.T, s *Sim, r *rand.Rand, members int) (scribe.ID, []scribe.Addr, []int64) {
	t.Helper()
	key := scribe.GroupID(s.Cfg.Space(), "prices", "node-17")
	s.Do(17, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Create(now, key, out) })
	s.Run()
	order := r.Perm(len(s.Nodes))[:members]
	var joined []scribe.Addr
	var costs []int64
	for _, m := range order {
		a := scribe.Addr(m)
		before := s.Sent[scribe.KindJoin]
		s.Do(a, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Join(now, key, out) })
		s.Run()
		joined = append(joined, a)
		costs = append(costs, s.Sent[scribe.KindJoin]-before)
	}
	return key, joined, costs
}

func onTree(s *Sim, key scribe.ID, a scribe.Addr) bool {
	_, ok := s.Nodes[a].Group(key)
	return ok
}

func memberSet(s *Sim, members []scribe.Addr) map[scribe.Addr]bool {
	set := map[scribe.Addr]bool{}
	for _, m := range members {
		if s.Alive(m) {
			set[m] = true
		}
	}
	return set
}

// TestJoinStopsAtFirstForwarder checks that each join sends exactly as many
// JOINs as the Pastry route takes to reach the first node already on the
// tree, that the root is the numerically closest node, and that later
// joiners cost fewer messages on average.
func TestJoinStopsAtFirstForwarder(t *testing.T) {
	s, r := smallNet(t, 3)
	key := scribe.GroupID(s.Cfg.Space(), "prices", "node-17")
	s.Do(17, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Create(now, key, out) })
	s.Run()
	var costs []int64
	for _, m := range r.Perm(len(s.Nodes))[:32] {
		a := scribe.Addr(m)
		var want int64
		if !onTree(s, key, a) {
			for _, hop := range walk(t, s, a, key)[1:] {
				want++
				if onTree(s, key, hop) {
					break
				}
			}
		}
		before := s.Sent[scribe.KindJoin]
		s.Do(a, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Join(now, key, out) })
		s.Run()
		got := s.Sent[scribe.KindJoin] - before
		if got != want {
			t.Fatalf("join by %d sent %d JOINs, want %d (the hops to the first node on the tree)", a, got, want)
		}
		costs = append(costs, got)
	}
	root := closestLive(s, key)
	if g, ok := s.Nodes[root].Group(key); !ok || !g.Root {
		t.Fatalf("node %d, numerically closest to the group id, is not the root", root)
	}
	var early, late int64
	for i, c := range costs {
		if i < len(costs)/2 {
			early += c
		} else {
			late += c
		}
	}
	if late >= early {
		t.Fatalf("the later 16 joiners sent %d JOINs, the first 16 sent %d: want fewer", late, early)
	}
}

// TestMulticastExactlyOnce checks delivery from the root and from a
// publisher off the tree, whose second message goes straight to the cached
// root.
func TestMulticastExactlyOnce(t *testing.T) {
	s, r := smallNet(t, 4)
	key, members, _ := pricesTree(t, s, r, 12)
	set := memberSet(s, members)
	root := closestLive(s, key)
	checkExactlyOnce(t, s, multicastOnce(s, key, root), set)

	pub := scribe.NoAddr
	for a := range s.Nodes {
		if !onTree(s, key, scribe.Addr(a)) {
			pub = scribe.Addr(a)
			break
		}
	}
	checkExactlyOnce(t, s, multicastOnce(s, key, pub), set)
	before := s.Sent[scribe.KindPublish]
	checkExactlyOnce(t, s, multicastOnce(s, key, pub), set)
	if got := s.Sent[scribe.KindPublish] - before; got != 1 {
		t.Fatalf("second publish took %d PUBLISH messages, want 1 (straight to the cached root)", got)
	}
}

// TestLeavePrunesExactly predicts, from the tree before a LEAVE, which nodes
// are left with no children and no membership, and checks that exactly those
// leave the tree, with one LEAVE message each.
func TestLeavePrunesExactly(t *testing.T) {
	s, r := smallNet(t, 5)
	key, members, _ := pricesTree(t, s, r, 16)
	for _, leaver := range members[:8] {
		want := map[scribe.Addr]bool{}
		cur, left := leaver, scribe.NoAddr
		for {
			g, _ := s.Nodes[cur].Group(key)
			children := len(g.Children)
			if left != scribe.NoAddr {
				children--
			}
			if (cur != leaver && g.Member) || g.Root || children > 0 {
				break
			}
			want[cur] = true
			cur, left = g.Parent.Addr, cur
		}
		var before []scribe.Addr
		for a := range s.Nodes {
			if onTree(s, key, scribe.Addr(a)) {
				before = append(before, scribe.Addr(a))
			}
		}
		leaves := s.Sent[scribe.KindLeave]
		s.Do(leaver, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Leave(now, key, out) })
		s.Run()
		for _, a := range before {
			if gone := !onTree(s, key, a); gone != want[a] {
				t.Fatalf("after %d left: node %d pruned=%v, want %v", leaver, a, gone, want[a])
			}
		}
		if got := s.Sent[scribe.KindLeave] - leaves; got != int64(len(want)) {
			t.Fatalf("after %d left: %d LEAVE messages, want %d", leaver, got, len(want))
		}
	}
	checkExactlyOnce(t, s, multicastOnce(s, key, closestLive(s, key)), memberSet(s, members[8:]))
}

// TestRepairAfterFailure kills a forwarder with children, then the root, and
// checks that heartbeats and rejoins make every live member reachable again,
// exactly once, with the next closest node (holding a replica) as new root.
func TestRepairAfterFailure(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		s, r := smallNet(t, seed)
		key, members, _ := pricesTree(t, s, r, 10)
		root := closestLive(s, key)
		victim := scribe.NoAddr
		for a := range s.Nodes {
			if g, ok := s.Nodes[a].Group(key); ok && !g.Root && len(g.Children) > 0 {
				victim = scribe.Addr(a)
				break
			}
		}
		if victim == scribe.NoAddr {
			t.Fatalf("seed %d: no forwarder with children", seed)
		}
		s.Kill(victim)
		s.RunTicks(s.Now() + 10*s.Cfg.HeartbeatInterval)
		checkExactlyOnce(t, s, multicastOnce(s, key, root), memberSet(s, members))

		s.Kill(root)
		s.RunTicks(s.Now() + 10*s.Cfg.HeartbeatInterval)
		newRoot := closestLive(s, key)
		g, ok := s.Nodes[newRoot].Group(key)
		if !ok || !g.Root {
			t.Fatalf("seed %d: after the root failed, the closest live node %d is not root", seed, newRoot)
		}
		if !s.Nodes[newRoot].HasReplica(key) {
			t.Errorf("seed %d: new root %d holds no replica of the root state", seed, newRoot)
		}
		checkExactlyOnce(t, s, multicastOnce(s, key, newRoot), memberSet(s, members))
	}
}

// TestBottleneckRemoverCapsChildren joins every node and checks that no node
// ends with more children than the cap and that multicast still reaches
// every member exactly once.
func TestBottleneckRemoverCapsChildren(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 0))
	cfg := seedConfig
	cfg.MaxChildren = 3
	cfg = cfg.WithDefaults()
	s, err := New(cfg, NewPlane(r, 64, 1000), RandomIDs(r, cfg.Space(), 64))
	if err != nil {
		t.Fatal(err)
	}
	BuildByJoins(s)
	key, members, _ := pricesTree(t, s, r, 64)
	for _, n := range s.Nodes {
		if _, entries := n.ChildrenLoad(); entries > 3 {
			t.Fatalf("node %d has %d children, over the cap of 3", n.Self().Addr, entries)
		}
	}
	if s.Sent[scribe.KindRedirect] == 0 {
		t.Fatal("the bottleneck remover never ran")
	}
	checkExactlyOnce(t, s, multicastOnce(s, key, closestLive(s, key)), memberSet(s, members))
	// Heartbeats carry paths from the root: a loop would show up as a rejoin.
	joins := s.Sent[scribe.KindJoin]
	s.RunTicks(s.Now() + 5*s.Cfg.HeartbeatInterval)
	if s.Sent[scribe.KindJoin] != joins {
		t.Fatal("heartbeats found a loop in the tree")
	}
}

// TestCollapseRemovesSingleChildForwarders checks that after collapsing no
// non-member forwarder with one child is left and multicast still reaches
// every member exactly once.
func TestCollapseRemovesSingleChildForwarders(t *testing.T) {
	s, r := smallNet(t, 6)
	key, members, _ := pricesTree(t, s, r, 6)
	before := treeSize(s, key)
	for a := range s.Nodes {
		s.Do(scribe.Addr(a), func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Collapse(now, out) })
		s.Run()
	}
	for a, n := range s.Nodes {
		if g, ok := n.Group(key); ok && !g.Member && !g.Root && len(g.Children) == 1 {
			t.Fatalf("node %d is still a single-child non-member forwarder", a)
		}
	}
	if after := treeSize(s, key); after >= before {
		t.Fatalf("collapsing left %d tree nodes of %d", after, before)
	}
	checkExactlyOnce(t, s, multicastOnce(s, key, closestLive(s, key)), memberSet(s, members))
}

func treeSize(s *Sim, key scribe.ID) int {
	n := 0
	for a := range s.Nodes {
		if onTree(s, key, scribe.Addr(a)) {
			n++
		}
	}
	return n
}
