package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReplicatedPubendMembership: pubend p replicated on routers a, b and
// c, linked through hub h (loopback), a durable subscriber at h and a
// durable publisher knowing the replicas' routers. While it publishes,
// `sift admin pubend` adds a replica d (its router started with
// --replica-join; a learner first), replaces a follower by e, and
// removes the leader itself (it hands leadership over first), each a
// joint-consensus change at the leader; the replaced and removed routers
// are stopped afterwards. Refused commands (no leader among the routers
// given, an unknown replica, a pubend not replicated, no --http) exit
// non-zero saying why and change nothing. At the end the
// publisher has every event acknowledged and the subscriber's log holds
// each once, in tick order, with no gap.
func TestReplicatedPubendMembership(t *testing.T) {
	const n, rate = 12_000, 800.0
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	m := startReplicatedHub(t, ctx)
	defer m.stopAll()
	admin := func(args ...string) (string, error) {
		return runBin(t, ctx, nil, "sift", append([]string{"admin", "pubend"}, args...)...)
	}

	events, eventsFile, sub := m.subscribeAll(t, n)
	// The publisher knows the routers of d and e (started later) too:
	// once the leader is removed, the new leader may be any of c, d, e.
	later := map[string]string{"d": freeUDPAddr(t), "e": freeUDPAddr(t)}
	pub := m.publishReplicated(t, ctx, eventsFile, rate, later["d"], later["e"])
	time.Sleep(time.Second)

	// Refusals: each says why, and the roster stays a, b, c.
	l := m.leaderOf(replicaNames)
	if l == "" {
		t.Fatalf("no leader\n%s", m.logs())
	}
	var followers []string
	for _, name := range replicaNames {
		if name != l {
			followers = append(followers, name)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "--http", m.httpOf(followers...), replicaPubend, "d"}, fmt.Sprintf("does not lead pubend p (leader: %s)", l)},
		{[]string{"remove", "--http", m.httpOf(l), replicaPubend, "zz"}, `unknown replica "zz" (replicas: a, b, c)`},
		{[]string{"add", "--http", m.httpOf(l), replicaPubend, followers[0]}, "is already a replica"},
		{[]string{"add", "--http", m.httpOf(l), "nope", "d"}, "no replica of this pubend here"},
		{[]string{"add", replicaPubend, "d"}, "--http is required"},
		{[]string{"replace", "--http", m.httpOf(l), replicaPubend, "a"}, "accepts 3 arg(s)"},
	} {
		out, err := admin(tc.args...)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Fatalf("sift admin pubend %s: %v\n%s\nwant an error containing %q", strings.Join(tc.args, " "), err, out, tc.want)
		}
	}
	m.waitReplicas(ctx, replicaNames, "the roster unchanged by refused commands", 5*time.Second, func(sts map[string]replicaStatusView) bool {
		return slices.Equal(sts[l].Roster, replicaNames)
	})

	// Add d.
	addNode := func(name, replicas string) {
		m.nodes[name] = &meshNode{name: name, addr: later[name], peers: []string{"h"},
			flags: []string{"--pubend", replicaPubend, "--replicas", replicas, "--replica-join"}}
		m.order = append(m.order, name)
	}
	addNode("d", "a,b,c,d")
	adding := background("admin add", startProc(t, ctx, "sift", "admin", "pubend", "add", "--http", m.httpOf(replicaNames...), "--wait", "60s", replicaPubend, "d"))
	time.Sleep(300 * time.Millisecond)
	m.start("d", 1)
	if err := adding.wait(); err != nil || !strings.Contains(adding.p.stdout.String(), "d is a voter of pubend p") {
		t.Fatalf("sift admin pubend add: %v\n%s\n%s\n%s", err, adding.p.stdout.String(), adding.stderr(), m.logs())
	}
	t.Logf("add d: %s", strings.TrimSpace(adding.p.stdout.String()))
	if pub.exited() {
		t.Fatalf("the publisher finished before the replacement: lower the rate")
	}

	// Replace a follower by e, then stop the follower's router.
	all := []string{"a", "b", "c", "d"}
	l = m.leaderOf(all)
	old := ""
	for _, name := range replicaNames {
		if name != l {
			old = name
			break
		}
	}
	addNode("e", "a,b,c,d,e")
	replacing := background("admin replace", startProc(t, ctx, "sift", "admin", "pubend", "replace", "--http", m.httpOf(all...), "--wait", "60s", replicaPubend, old, "e"))
	time.Sleep(300 * time.Millisecond)
	m.start("e", 1)
	if err := replacing.wait(); err != nil || !strings.Contains(replacing.p.stdout.String(), "e is a voter of pubend p") {
		t.Fatalf("sift admin pubend replace: %v\n%s\n%s\n%s", err, replacing.p.stdout.String(), replacing.stderr(), m.logs())
	}
	t.Logf("replace %s by e: %s", old, strings.TrimSpace(replacing.p.stdout.String()))
	m.nodes[old].proc.stop()
	if pub.exited() {
		t.Fatalf("the publisher finished before the removal: lower the rate")
	}

	// Remove the leader itself: it hands leadership over first, and the
	// next leader removes it. Then stop its router.
	live := slices.DeleteFunc(slices.Clone([]string{"a", "b", "c", "d", "e"}), func(s string) bool { return s == old })
	gone := m.leaderOf(live)
	out, err := admin("remove", "--http", m.httpOf(live...), replicaPubend, gone)
	if err != nil || !strings.Contains(out, "removed "+gone+" from pubend p") {
		t.Fatalf("sift admin pubend remove %s: %v\n%s\n%s", gone, err, out, m.logs())
	}
	t.Logf("remove %s: %s", gone, strings.TrimSpace(out))
	m.nodes[gone].proc.stop()
	live = slices.DeleteFunc(live, func(s string) bool { return s == gone })
	st, err := admin("status", "--http", m.httpOf(live...), replicaPubend)
	if err != nil {
		t.Fatalf("sift admin pubend status: %v\n%s", err, st)
	}
	t.Logf("sift admin pubend status:\n%s", st)

	c := m.finishOneSub(ctx, pub, sub, events)
	m.waitReplicas(ctx, live, "the final voters", 10*time.Second, func(sts map[string]replicaStatusView) bool {
		want := slices.Clone(live)
		for _, name := range live {
			got := slices.Sorted(slices.Values(sts[name].Voters))
			if !slices.Equal(got, want) || !slices.Equal(slices.Sorted(slices.Values(sts[name].Roster)), want) {
				return false
			}
		}
		return oneLeader(sts)
	})
	t.Logf("sub: %s; voters %v", c, live)
}
