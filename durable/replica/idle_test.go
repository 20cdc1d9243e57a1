package replica

import (
	"testing"

	"github.com/sift-pubsub/sift/durable"
)

// TestIdleReplicatedPubendProposals: an idle replicated pubend whose SHB
// reports every 100 ms (as siftd's does) proposes about one raft entry
// per second, each synced on every replica: its lease renewal, carrying
// the reports taken and the release over silent ticks (durable.Pubend's
// writeHeld), not one entry per report and per release. Release still
// follows the reports.
func TestIdleReplicatedPubendProposals(t *testing.T) {
	c := newCluster(t, 3, 1)
	leader := c.waitLeader()
	var version uint64
	report := func() {
		version++
		tr := max(c.now-1_000_000, 0) // an SHB's written LD lags about a second
		env := durable.Envelope{From: "r1", To: "phb", Msg: durable.Msg{Kind: durable.MsgRelease, Pubend: "p",
			Epoch: 1, Version: version, Reports: []durable.Report{{SHB: "shb", Tr: tr, Td: tr}}}}
		if err := c.reps[leader].Step(c.now, env); err != nil {
			t.Fatal(err)
		}
	}
	idle := func(d durable.Tick) {
		for end := c.now + d; c.now < end; {
			c.run(100_000)
			report()
		}
	}
	idle(3_000_000)
	before := c.reps[leader].Stats.Proposals
	idle(10_000_000)
	if c.leader() != leader {
		t.Fatalf("leader changed from %s to %s while idle", leader, c.leader())
	}
	n := c.reps[leader].Stats.Proposals - before
	lost := c.reps[leader].lead.pubend.Lost()
	t.Logf("10 s idle: %d proposals; lost %d µs behind the clock", n, c.now-lost)
	if n > 12 {
		t.Errorf("idle replicated pubend proposed %d entries in 10 s, want at most 12", n)
	}
	if c.now-lost > 2_500_000 {
		t.Errorf("release %d µs behind the clock, want at most 2.5 s", c.now-lost)
	}
}
