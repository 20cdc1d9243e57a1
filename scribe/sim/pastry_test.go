package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/sift-pubsub/sift/scribe"
)

// TestRoutesReachClosest checks, on networks built message by message, that
// every route ends at the numerically closest live node and that every hop
// shares a longer prefix with the key or is numerically closer to it.
func TestRoutesReachClosest(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		s, r := smallNet(t, seed)
		space := s.Cfg.Space()
		for range 300 {
			key := space.Random(r)
			from := scribe.Addr(r.IntN(len(s.Nodes)))
			path := walk(t, s, from, key)
			if end, want := path[len(path)-1], closestLive(s, key); end != want {
				t.Fatalf("seed %d: route from %d to %s ends at %s, want %s", seed, from, space.Format(key),
					space.Format(s.Nodes[end].Self().ID), space.Format(s.Nodes[want].Self().ID))
			}
			for i := 1; i < len(path); i++ {
				a, b := s.Nodes[path[i-1]].Self().ID, s.Nodes[path[i]].Self().ID
				if space.SharedPrefix(b, key) <= space.SharedPrefix(a, key) && !scribe.Closer(key, b, a) {
					t.Fatalf("seed %d: hop %s -> %s toward %s neither lengthens the prefix nor gets closer",
						seed, space.Format(a), space.Format(b), space.Format(key))
				}
			}
		}
	}
}

// TestJoinBuildsExactLeafSets checks the join protocol against brute force:
// after all joins, every leaf set holds exactly the |L|/2 nearest nodes on
// each side.
func TestJoinBuildsExactLeafSets(t *testing.T) {
	s, _ := smallNet(t, 7)
	for _, n := range s.Nodes {
		got := map[scribe.Addr]bool{}
		for _, x := range n.LeafSet() {
			got[x.Addr] = true
		}
		want := map[scribe.Addr]bool{}
		for side := 0; side < 2; side++ {
			var picked []scribe.Addr
			for range s.Cfg.Leaf / 2 {
				best := scribe.NoAddr
				var bestD scribe.ID
				for b, m := range s.Nodes {
					if m == n || contains(picked, scribe.Addr(b)) {
						continue
					}
					d := m.Self().ID.Sub(n.Self().ID)
					if side == 1 {
						d = n.Self().ID.Sub(m.Self().ID)
					}
					if best == scribe.NoAddr || d.Less(bestD) {
						best, bestD = scribe.Addr(b), d
					}
				}
				picked = append(picked, best)
				want[best] = true
			}
		}
		if len(got) != len(want) {
			t.Fatalf("node %d leaf set %v, want %v", n.Self().Addr, got, want)
		}
		for a := range want {
			if !got[a] {
				t.Fatalf("node %d leaf set %v, want %v", n.Self().Addr, got, want)
			}
		}
	}
}

func contains(s []scribe.Addr, a scribe.Addr) bool {
	for _, x := range s {
		if x == a {
			return true
		}
	}
	return false
}

// TestRoutesAfterFailures kills a quarter of the nodes and checks that, once
// the survivors have found out (by messages bouncing) and repaired, routes
// again reach the numerically closest live node.
func TestRoutesAfterFailures(t *testing.T) {
	for seed := uint64(11); seed <= 20; seed++ {
		routesAfterFailures(t, seed)
	}
}

func routesAfterFailures(t *testing.T, seed uint64) {
	s, r := smallNet(t, seed)
	space := s.Cfg.Space()
	for range 16 {
		s.Kill(scribe.Addr(r.IntN(len(s.Nodes))))
	}
	// Every live node tries to reach every dead one it knows: the bounces
	// tell it they are dead and trigger repair.
	for a := range s.Nodes {
		if !s.Alive(scribe.Addr(a)) {
			continue
		}
		for b := range s.Nodes {
			if !s.Alive(scribe.Addr(b)) {
				s.Do(scribe.Addr(a), func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) {
					out.Msgs = append(out.Msgs, scribe.Envelope{To: scribe.Addr(b), Msg: scribe.Message{Kind: scribe.KindAnnounce, From: n.Self()}})
				})
			}
		}
	}
	s.Run()
	for range 300 {
		key := space.Random(r)
		from := scribe.Addr(r.IntN(len(s.Nodes)))
		if !s.Alive(from) {
			continue
		}
		path := walk(t, s, from, key)
		if end, want := path[len(path)-1], closestLive(s, key); end != want {
			t.Fatalf("seed %d: after failures: route from %d to %s ends at %d, want %d", seed, from, space.Format(key), end, want)
		}
	}
}

// TestStaticRoutesReachClosest checks tables built from global knowledge:
// routes end at the numerically closest node within log_{2^b} N + 2 hops.
func TestStaticRoutesReachClosest(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 0))
	cfg := scribe.Config{Bits: 32, B: 4, Leaf: 16, Neighbours: 32}.WithDefaults()
	s, err := New(cfg, NewPlane(r, 3000, 1000), RandomIDs(r, cfg.Space(), 3000))
	if err != nil {
		t.Fatal(err)
	}
	BuildStatic(s, r, nil)
	for range 2000 {
		key := cfg.Space().Random(r)
		path := walk(t, s, scribe.Addr(r.IntN(3000)), key)
		if end, want := path[len(path)-1], closestLive(s, key); end != want {
			t.Fatalf("route to %s ends at %d, want %d", cfg.Space().Format(key), end, want)
		}
		if hops := len(path) - 1; hops > 5 { // log16(3000) < 3, plus the leaf set hop
			t.Fatalf("route to %s took %d hops", cfg.Space().Format(key), hops)
		}
	}
}
