package replica

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/durable"
)

// TestLeadershipGoesToPreferred: whichever replica wins the first
// election, the preferred one leads soon after; when it crashes another
// takes over, and once it is back and caught up it leads again. Every
// acknowledged event is logged once, at its acknowledged tick, on every
// replica, and no tick is announced twice with other content.
func TestLeadershipGoesToPreferred(t *testing.T) {
	handed := 0
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := newClusterPreferring(t, 3, seed, "r3")
			first := c.waitLeader()
			c.waitLeaderIs("r3", 2_000_000)
			if first != "r3" {
				if c.reps[first].Stats.Preferred == 0 {
					t.Fatalf("%s handed leadership over without counting it", first)
				}
				handed++
			}
			acked := c.publishAcked(0, 20)
			c.crash("r3")
			other := c.waitLeader()
			acked = c.publishAcked(acked, 40)
			c.boot("r3", false)
			c.waitLeaderIs("r3", 5_000_000)
			if c.reps[other].Stats.Preferred == 0 {
				t.Fatalf("%s handed leadership back without counting it", other)
			}
			c.publishAcked(acked, 60)
			c.run(200_000)
			c.checkLoggedOnce(c.acks())
			checkAnnouncements(t, c.out)
		})
	}
	if handed == 0 {
		t.Fatal("r3 won every first election: the handover after it was never exercised")
	}
}

// TestNoPreferenceKeepsLeader: without a preferred replica, a quiet
// group keeps its leader (no handover).
func TestNoPreferenceKeepsLeader(t *testing.T) {
	c := newCluster(t, 3, 3)
	first := c.waitLeader()
	c.run(2_000_000)
	if l := c.leader(); l != first || c.reps[first].Stats.Preferred != 0 {
		t.Fatalf("leader %s became %s with no preference (%d handovers)", first, l, c.reps[first].Stats.Preferred)
	}
}

// waitLeaderIs runs the cluster until name leads, for at most d.
func (c *cluster) waitLeaderIs(name string, d durable.Tick) {
	c.t.Helper()
	for end := c.now + d; c.now < end; c.run(10_000) {
		if c.leader() == name {
			return
		}
	}
	c.t.Fatalf("%s does not lead after %d µs (leader %q)", name, d, c.leader())
}

// publishAcked publishes one publisher's sequences from acked+1 until
// every sequence up to n is acknowledged, resending the unacknowledged
// ones (the idempotent resend) while leaders change, and returns n.
func (c *cluster) publishAcked(acked, n uint64) uint64 {
	c.t.Helper()
	for step := 0; acked < n; step++ {
		if step == 1000 {
			c.t.Fatalf("only %d of %d acknowledged", acked, n)
		}
		for next := acked + 1; next <= min(acked+4, n); next++ {
			c.publish("pub", next)
		}
		c.run(2_000)
		for a := c.acks(); a[acked+1] != 0; acked++ {
		}
	}
	return acked
}

// checkLoggedOnce checks that every replica up logs each acknowledged
// sequence once, at the tick it was acknowledged with.
func (c *cluster) checkLoggedOnce(acks map[uint64]durable.Tick) {
	c.t.Helper()
	for _, name := range c.names {
		if c.down[name] {
			continue
		}
		seen := map[uint64]durable.Tick{}
		for tick, seq := range c.logged(name) {
			if old, ok := seen[seq]; ok {
				c.t.Fatalf("%s: seq %d logged twice, at %d and %d", name, seq, old, tick)
			}
			seen[seq] = tick
		}
		for seq, tick := range acks {
			if seen[seq] != tick {
				c.t.Fatalf("%s: seq %d acknowledged at tick %d, logged at %d", name, seq, tick, seen[seq])
			}
		}
	}
}
