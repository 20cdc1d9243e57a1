package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReplicatedFailoverLeaderGone: pubend p replicated on routers a, b
// and c (each linked to hub h, whose SHB serves a durable subscriber); a
// durable publisher that knows the three replicas' routers. A quarter of
// the way through, the leader's router is SIGKILLed and never comes back:
// it closes no connection, so the publisher notices only its silence (sift
// pub takes a router for gone after 1 s without a heartbeat), and goes to
// the new leader, which one of the survivors' refusals names. The
// publisher has every event acknowledged, the subscriber logs every event
// once, in tick order, with no gap, and the two survivors apply the same
// index. It logs the failover: from the kill to the first event a leader
// took after it (the figure the issue bounds at 2 s; not asserted, the
// machine's load decides it).
func TestReplicatedFailoverLeaderGone(t *testing.T) {
	const n, rate = 8_000, 1000.0
	publishFor := time.Duration(float64(n) / rate * float64(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 3*publishFor+120*time.Second)
	defer cancel()
	m := newDurableMesh(t, ctx, nil, map[string][]string{"h": nil, "a": {"h"}, "b": {"h"}, "c": {"h"}})
	m.noFlags = true
	for _, name := range replicaNames {
		m.nodes[name].flags = []string{"--pubend", replicaPubend, "--replicas", strings.Join(replicaNames, ",")}
	}
	m.startAll()
	defer m.stopAll()
	m.waitReplicas(ctx, replicaNames, "a leader for p", 30*time.Second, oneLeader)
	m.waitHubHost(ctx, 30*time.Second)

	events := seqEvents(n, 27)
	sub := m.newSub("all", `seq >= 1`, "h")
	m.startSubs([]*durableSub{sub})
	var routers []string
	for _, name := range replicaNames {
		routers = append(routers, m.nodes[name].addr)
	}
	pub := background("pub", startProc(t, ctx, "sift", "pub", "--durable", "--pubend", replicaPubend,
		"--router", strings.Join(routers, ","), "--certs", m.certDir, "--rate", fmt.Sprint(rate), "--timeout", "60s",
		writeEvents(t, m.dir, events)))
	time.Sleep(publishFor / 4)
	if pub.exited() {
		t.Fatalf("the publisher finished before the kill\n%s", pub.stderr())
	}
	gone := m.leaderOf(replicaNames)
	if gone == "" {
		t.Fatalf("no replica leads p\n%s", m.logs())
	}
	killed := time.Now()
	m.nodes[gone].proc.kill()
	rest := slices.DeleteFunc(slices.Clone(replicaNames), func(n string) bool { return n == gone })
	m.waitReplicas(ctx, rest, "a new leader without "+gone, 30*time.Second, oneLeader)
	t.Logf("killed the leader %s; %s leads after %v", gone, m.leaderOf(rest), time.Since(killed).Round(time.Millisecond))

	c := m.finishOneSub(ctx, pub, sub, events)
	m.waitCaughtUp(ctx, rest, 30*time.Second)
	failover, err := failoverFrom(sub.file, killed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("subscriber: %s; failover (kill -9 of %s, never back, to the first event a leader took after it): %v",
		c, gone, failover.Round(time.Millisecond))
}
