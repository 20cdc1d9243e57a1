package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReplicatedPubendReplaceLeader: pubend p replicated on routers a, b
// and c around hub h, a durable subscriber at h, a durable publisher
// knowing every replica's router. While it publishes, `sift admin pubend
// replace` replaces the leader itself by a new replica d (its router
// started with --replica-join): d joins as a learner, the leader hands
// leadership to another voter, and the new leader makes d a voter in
// place of the old one, whose router is then stopped. Publishing goes on
// at the new leader: every event is acknowledged and logged once, in
// tick order, with no gap, and the voters end as the roster without the
// old leader.
func TestReplicatedPubendReplaceLeader(t *testing.T) {
	const n, rate = 8_000, 800.0
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	m := startReplicatedHub(t, ctx)
	defer m.stopAll()

	events, eventsFile, sub := m.subscribeAll(t, n)
	dAddr := freeUDPAddr(t)
	pub := m.publishReplicated(t, ctx, eventsFile, rate, dAddr)
	time.Sleep(2 * time.Second)

	old := m.leaderOf(replicaNames)
	if old == "" {
		t.Fatalf("no leader\n%s", m.logs())
	}
	m.nodes["d"] = &meshNode{name: "d", addr: dAddr, peers: []string{"h"},
		flags: []string{"--pubend", replicaPubend, "--replicas", "a,b,c,d", "--replica-join"}}
	m.order = append(m.order, "d")
	all := []string{"a", "b", "c", "d"}
	replacing := background("admin replace", startProc(t, ctx, "sift", "admin", "pubend", "replace",
		"--http", m.httpOf(replicaNames...), "--wait", "60s", replicaPubend, old, "d"))
	time.Sleep(300 * time.Millisecond)
	m.start("d", 1)
	if err := replacing.wait(); err != nil || !strings.Contains(replacing.p.stdout.String(), "d is a voter of pubend p") {
		t.Fatalf("sift admin pubend replace %s d: %v\n%s\n%s\n%s", old, err, replacing.p.stdout.String(), replacing.stderr(), m.logs())
	}
	t.Logf("replace the leader %s by d: %s", old, strings.TrimSpace(replacing.p.stdout.String()))
	if pub.exited() {
		t.Fatalf("the publisher finished before the replacement: lower the rate")
	}
	live := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == old })
	if l := m.leaderOf(live); l == "" || l == old {
		t.Fatalf("after the replacement the leader is %q (old leader %s)\n%s", l, old, m.logs())
	}
	m.nodes[old].proc.stop()

	c := m.finishOneSub(ctx, pub, sub, events)
	m.waitReplicas(ctx, live, "the final voters", 10*time.Second, func(sts map[string]replicaStatusView) bool {
		for _, name := range live {
			got := slices.Sorted(slices.Values(sts[name].Voters))
			if !slices.Equal(got, live) || !slices.Equal(slices.Sorted(slices.Values(sts[name].Roster)), live) {
				return false
			}
		}
		return oneLeader(sts)
	})
	t.Logf("sub: %s; voters %v", c, live)
}
