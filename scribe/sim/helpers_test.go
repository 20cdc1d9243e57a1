package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/sift-pubsub/sift/scribe"
)

// seedConfig is the seed's small setting: 16-bit ids, b=2, |L|=4, |M|=4.
var seedConfig = scribe.Config{Bits: 16, B: 2, Leaf: 4, Neighbours: 4, HeartbeatInterval: 5000 * PlaneScale}

// smallNet builds the seed's 64-node network in a 1000x1000 plane with
// Pastry's join protocol, message by message.
func smallNet(t *testing.T, seed uint64) (*Sim, *rand.Rand) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0))
	cfg := seedConfig.WithDefaults()
	s, err := New(cfg, NewPlane(r, 64, 1000), RandomIDs(r, cfg.Space(), 64))
	if err != nil {
		t.Fatal(err)
	}
	BuildByJoins(s)
	return s, r
}

// closestLive is the brute-force root of key: the live node numerically
// closest to it.
func closestLive(s *Sim, key scribe.ID) scribe.Addr {
	best := scribe.NoAddr
	for a, n := range s.Nodes {
		if s.Alive(scribe.Addr(a)) && (best == scribe.NoAddr || scribe.Closer(key, n.Self().ID, s.Nodes[best].Self().ID)) {
			best = scribe.Addr(a)
		}
	}
	return best
}

// walk follows NextHop from a toward key and returns the nodes visited,
// a first; it fails the test on a route longer than the network.
func walk(t *testing.T, s *Sim, a scribe.Addr, key scribe.ID) []scribe.Addr {
	t.Helper()
	path := []scribe.Addr{a}
	for {
		next, ok := s.Nodes[a].NextHop(key)
		if !ok {
			return path
		}
		a = next.Addr
		path = append(path, a)
		if len(path) > len(s.Nodes) {
			t.Fatalf("route to %s longer than the network: %v", s.Cfg.Space().Format(key), path)
		}
	}
}

// multicastOnce publishes one message from the root of key and returns how
// many times each node received it as a member.
func multicastOnce(s *Sim, key scribe.ID, from scribe.Addr) map[scribe.Addr]int {
	got := map[scribe.Addr]int{}
	s.OnDeliver = func(at scribe.Addr, d scribe.Delivery, _ scribe.Time) {
		if d.Group == key {
			got[at]++
		}
	}
	s.Do(from, func(n *scribe.Node, now scribe.Time, out *scribe.Outbox) { n.Publish(now, key, out) })
	s.Run()
	s.OnDeliver = nil
	return got
}

func checkExactlyOnce(t *testing.T, s *Sim, got map[scribe.Addr]int, members map[scribe.Addr]bool) {
	t.Helper()
	for m := range members {
		if got[m] != 1 {
			t.Errorf("member %d received the multicast %d times, want 1", m, got[m])
		}
	}
	for a, c := range got {
		if !members[a] {
			t.Errorf("non-member %d received the multicast %d times", a, c)
		}
	}
}
