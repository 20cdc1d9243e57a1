package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
)

// replicaNames are the routers holding the replicas of pubend p in the
// replicated-pubend tests; replicaPubend is that pubend.
var replicaNames = []string{"a", "b", "c"}

const replicaPubend = "p"

// replicaStatusView is one replica as /debug/durable lists it (the
// router's own JSON type, so that the test reads what siftd writes).
type replicaStatusView = router.DurableReplicaStatus

// replicaStatus returns router name's replica of pubend p.
func (m *durableMesh) replicaStatus(name string) (replicaStatusView, error) {
	body, err := m.fetch(name, "/debug/durable")
	if err != nil {
		return replicaStatusView{}, err
	}
	var st struct {
		Replicas []replicaStatusView `json:"replicas"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		return replicaStatusView{}, fmt.Errorf("/debug/durable of %s: %w", name, err)
	}
	for _, r := range st.Replicas {
		if r.Pubend == replicaPubend {
			return r, nil
		}
	}
	return replicaStatusView{}, fmt.Errorf("%s has no replica of %s", name, replicaPubend)
}

// leaderOf returns the replica that runs pubend p, among those reachable
// ("" if none says it does).
func (m *durableMesh) leaderOf(among []string) string {
	for _, n := range among {
		if st, err := m.replicaStatus(n); err == nil && st.Leading {
			return n
		}
	}
	return ""
}

// waitReplicas waits until ok holds for the replicas' statuses (every
// router of among answering), or fails the test after deadline.
func (m *durableMesh) waitReplicas(ctx context.Context, among []string, what string, deadline time.Duration, ok func(map[string]replicaStatusView) bool) {
	m.t.Helper()
	end := time.Now().Add(deadline)
	for {
		sts := map[string]replicaStatusView{}
		for _, n := range among {
			if st, err := m.replicaStatus(n); err == nil {
				sts[n] = st
			}
		}
		if len(sts) == len(among) && ok(sts) {
			return
		}
		if time.Now().After(end) || ctx.Err() != nil {
			// The summary goes last: a CI log that keeps only the end of
			// the output still shows the replicas, twice, 1 s apart.
			first := m.replicaSummary()
			time.Sleep(time.Second)
			m.t.Fatalf("%s: not within %v\n%s\n%s\nrouters, 1 s apart:\n%s%s", what, deadline, m.logs(), m.durableViews(among), first, m.replicaSummary())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// replicaSummary returns one line per running router: how old its
// driver's view is, its links with the routers behind each, the durable
// messages its full lanes dropped, and its replica as raft sees it (at the
// leader, with its progress of each follower). Two summaries a second
// apart tell a stuck driver (the view's age grows) from stuck frames
// (views fresh, indexes still).
func (m *durableMesh) replicaSummary() string {
	var b strings.Builder
	for _, n := range m.order {
		if p := m.nodes[n].proc; p == nil || p.exited() {
			continue
		}
		body, err := m.fetch(n, "/debug/durable")
		var st router.DurableStatus
		if err == nil {
			err = json.Unmarshal([]byte(body), &st)
		}
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", n, err)
			continue
		}
		age := time.Duration(time.Now().UnixMicro()-int64(st.At)) * time.Microsecond
		fmt.Fprintf(&b, "%s: view age %v, links %v, link_dropped %v", n, age.Round(time.Millisecond), st.Links, st.LinkDropped)
		for _, r := range st.Replicas {
			fmt.Fprintf(&b, "; %s id %x %s term %d commit %d applied %d leader %q voter %v voters %v progress %v",
				r.Pubend, r.ID, r.State, r.Term, r.Commit, r.Applied, r.Leader, r.Voter, r.Voters, r.Progress)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// durableViews returns each router's /debug/durable as it is now, with
// the time its driver took it (a view that stops moving is a stuck
// driver) and the leader's raft progress of each follower.
func (m *durableMesh) durableViews(among []string) string {
	var b strings.Builder
	for _, n := range among {
		body, err := m.fetch(n, "/debug/durable")
		fmt.Fprintf(&b, "/debug/durable of %s at %d (err %v):\n%s\n", n, time.Now().UnixMicro(), err, body)
	}
	return b.String()
}

// replicaNetns puts the hub h (with the clients) and each replica router
// in a network namespace of its own, the hub linked to replica i by a
// veth pair over 10.202.i.0/30 (hub .1, replica .2). Nothing is in the
// test's own namespace, so runs side by side do not collide. It returns
// the hub's namespace and a function that cuts (down) or restores (up)
// replica i's veth.
func replicaNetns(t *testing.T, m *durableMesh) (string, func(i int, state string)) {
	t.Helper()
	prefix := fmt.Sprintf("sr%d", os.Getpid()%100000)
	ns := func(name string) string { return prefix + name }
	for _, name := range append([]string{"h"}, replicaNames...) {
		if out, err := runIP("netns", "add", ns(name)); err != nil {
			t.Skipf("cannot make a network namespace: %v: %s", err, out)
		}
		t.Cleanup(func() { runIP("netns", "del", ns(name)) })
		mustIP(t, "-n", ns(name), "link", "set", "lo", "up")
	}
	hubIf := func(i int) string { return fmt.Sprintf("%sh%d", prefix, i) }
	repIf := func(i int) string { return fmt.Sprintf("%sr%d", prefix, i) }
	for i, name := range replicaNames {
		mustIP(t, "link", "add", hubIf(i), "netns", ns("h"), "type", "veth", "peer", "name", repIf(i), "netns", ns(name))
		mustIP(t, "-n", ns("h"), "addr", "add", replicaAddr(i, 1)+"/30", "dev", hubIf(i))
		mustIP(t, "-n", ns(name), "addr", "add", replicaAddr(i, 2)+"/30", "dev", repIf(i))
		mustIP(t, "-n", ns("h"), "link", "set", hubIf(i), "up")
		mustIP(t, "-n", ns(name), "link", "set", repIf(i), "up")
		n := m.nodes[name]
		n.ns, n.addr, n.metricsHost = ns(name), replicaAddr(i, 2)+":4433", replicaAddr(i, 2)
		n.peerAddrs = []string{replicaAddr(i, 1) + ":4433"}
		n.flags = []string{"--pubend", replicaPubend, "--replicas", strings.Join(replicaNames, ",")}
	}
	h := m.nodes["h"]
	h.ns, h.listen, h.addr = ns("h"), "0.0.0.0:4433", "127.0.0.1:4433"
	m.clientNS = ns("h")
	cut := func(i int, state string) {
		mustIP(t, "-n", ns("h"), "link", "set", hubIf(i), state)
		mustIP(t, "-n", ns(replicaNames[i]), "link", "set", repIf(i), state)
	}
	return ns("h"), cut
}

// replicaAddr is host h (1: the hub, 2: the replica) of replica i's /30.
func replicaAddr(i, h int) string { return fmt.Sprintf("10.202.%d.%d", i+1, h) }

// runIP runs ip with args.
func runIP(args ...string) ([]byte, error) {
	return exec.Command(ipPath, args...).CombinedOutput()
}

// replicaFaultConfig sizes TestReplicatedPubendFaults: SIFT_REPLICA_EVENTS
// and SIFT_REPLICA_RATE override the defaults (20,000 events at 1,000 per
// second).
func replicaFaultConfig() (events int, rate float64) {
	events, rate = 20_000, 1000
	if n, err := strconv.Atoi(os.Getenv("SIFT_REPLICA_EVENTS")); err == nil && n > 0 {
		events = n
	}
	if r, err := strconv.ParseFloat(os.Getenv("SIFT_REPLICA_RATE"), 64); err == nil && r > 0 {
		rate = r
	}
	return events, rate
}

// TestReplicatedPubendFaults is the fault test of a replicated pubend with
// real processes: pubend p replicated on routers a, b and c (siftd
// --pubend p --replicas a,b,c), each in its own network namespace and
// linked to hub router h, whose SHB serves three durable subscribers. A
// durable publisher that knows the three replicas' routers publishes
// 20,000 events, paced so that it is still sending while the test
//  1. SIGKILLs the leader's router and restarts it on its data folder,
//  2. SIGKILLs a follower's router, removes its data folder and restarts
//     it empty with --replica-join (it rejoins under a fresh raft id by
//     joint consensus and catches up from a snapshot),
//  3. cuts the then leader's veth for 3 s (a partition: it is alone, the
//     other two elect a leader; it stops serving once a quorum period
//     passes without a majority answering, and, healed, follows the new
//     leader).
//
// At the end the publisher has every event acknowledged, and each
// subscriber's log holds every matching event exactly once, in tick
// order, with no gap (checkSubLog), and every replica has applied every
// entry its leader had committed (waitCaughtUp). It logs a summary line for docs/reliability.md.
func TestReplicatedPubendFaults(t *testing.T) {
	requireNetns(t)
	n, rate := replicaFaultConfig()
	publishFor := time.Duration(float64(n) / rate * float64(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 3*publishFor+150*time.Second)
	defer cancel()
	var hosts []string
	for i := range replicaNames {
		hosts = append(hosts, replicaAddr(i, 1), replicaAddr(i, 2))
	}
	m := newDurableMesh(t, ctx, nil, map[string][]string{"h": nil, "a": nil, "b": nil, "c": nil}, hosts...)
	m.noFlags = true
	hubNS, cut := replicaNetns(t, m)
	m.startAll()
	defer m.stopAll()
	m.waitReplicas(ctx, replicaNames, "a leader for p, followed by all", 30*time.Second, func(sts map[string]replicaStatusView) bool {
		leaders := 0
		for _, st := range sts {
			if st.Leading {
				leaders++
			}
		}
		return leaders == 1 && sts["a"].Leader != "" && sts["a"].Leader == sts["b"].Leader && sts["b"].Leader == sts["c"].Leader
	})
	m.waitHubHost(ctx, 30*time.Second)

	events := seqEvents(n, 24)
	eventsFile := writeEvents(t, m.dir, events)
	subs := []*durableSub{
		m.newSub("all", `seq >= 1`, "h"),
		m.newSub("buy", `side == "buy"`, "h"),
		m.newSub("big", `volume >= 5000 && venue != "EDGX"`, "h"),
	}
	m.startSubs(subs)
	var routers []string
	for _, name := range replicaNames {
		routers = append(routers, m.nodes[name].addr)
	}
	pub := background("pub", startProcIn(t, ctx, hubNS, "sift", "pub", "--durable", "--pubend", replicaPubend,
		"--router", strings.Join(routers, ","), "--certs", m.certDir, "--rate", fmt.Sprint(rate), "--timeout", "60s", eventsFile))
	start := time.Now()
	faults := m.replicaFaults(ctx, pub, publishFor, cut)
	err := pub.wait()
	if out := pub.p.stdout.String(); err != nil || !publishedRE.MatchString(out) {
		t.Fatalf("durable pub: %v\n%s\n%s\n%s", err, out, pub.stderr(), m.logs())
	}
	acked := publishedRE.FindStringSubmatch(pub.p.stdout.String())[1]
	t.Logf("published %s events in %v through %d faults: %s", acked, time.Since(start).Round(time.Millisecond), len(faults), strings.Join(faults, "; "))

	want := make([]int, len(subs))
	for i, s := range subs {
		want[i] = len(matchingSeqs(s.parsed, events))
	}
	got := waitLogs(ctx, subs, want, 90*time.Second)
	if !slices.Equal(got, want) {
		t.Logf("logs incomplete: %v of %v events; routers while the subscribers are connected:\n%s", got, want, m.logs())
	}
	for _, s := range subs {
		if err := s.proc.stop(); err != nil {
			t.Errorf("sub %s after SIGTERM: %v\n%s", s.id, err, s.proc.stderr())
		}
	}
	var lost, dup int
	for _, s := range subs {
		c, err := checkSubLog(s.file, s.parsed, events, false, nil, 0)
		lost += c.missing
		if err != nil {
			if strings.Contains(err.Error(), "duplicate") {
				dup++
			}
			t.Errorf("sub %s (%q): %s: %v", s.id, s.filter, c, err)
			continue
		}
		t.Logf("sub %s (%q): %s", s.id, s.filter, c)
	}
	m.waitCaughtUp(ctx, replicaNames, 30*time.Second)
	failover, err := failoverFrom(subs[0].file, m.killedLeader)
	if err != nil {
		t.Error(err)
	}
	t.Logf("fault report: faults=%d acknowledged=%s subscribers=%d delivered=%v lost=%d duplicated_logs=%d failover=%v",
		len(faults), acked, len(subs), got, lost, dup, failover.Round(time.Millisecond))
	if t.Failed() {
		for _, s := range subs {
			t.Logf("sub %s stderr:\n%s", s.id, s.proc.stderr())
		}
		t.Logf("router logs:\n%s", m.logs())
	}
}

// waitCaughtUp waits until every replica of among has applied every entry
// the leader had committed when it was asked, or fails the test after
// deadline. A leader keeps committing while idle (each silence's tick
// mark goes through raft), and each router's view is taken on its own
// timer, so the replicas' views seldom show one index at one instant:
// the test asks instead that the followers keep up, which is what a
// replica that stopped hearing its leader would not do. That they apply
// the same entry at each index is the simulator's check.
func (m *durableMesh) waitCaughtUp(ctx context.Context, among []string, deadline time.Duration) {
	m.t.Helper()
	var commit uint64
	var leader string
	m.waitReplicas(ctx, among, "a leader", deadline, func(sts map[string]replicaStatusView) bool {
		for n, st := range sts {
			if st.Leading {
				leader, commit = n, st.Commit
				return true
			}
		}
		return false
	})
	what := fmt.Sprintf("every replica applied index %d, committed by the leader %s", commit, leader)
	m.waitReplicas(ctx, among, what, deadline, func(sts map[string]replicaStatusView) bool {
		for _, st := range sts {
			if st.Applied < commit {
				return false
			}
		}
		return true
	})
}

// waitHubHost waits until hub h routes pubend p to its leader.
func (m *durableMesh) waitHubHost(ctx context.Context, deadline time.Duration) {
	m.t.Helper()
	end := time.Now().Add(deadline)
	for {
		ps, err := m.pubendViews("h")
		if err == nil && slices.ContainsFunc(ps, func(p durablePubendView) bool {
			return p.Pubend == replicaPubend && slices.Contains(replicaNames, p.Host)
		}) {
			return
		}
		if time.Now().After(end) || ctx.Err() != nil {
			m.t.Fatalf("h does not route pubend %s to a replica within %v: %v %+v\n%s", replicaPubend, deadline, err, ps, m.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// replicaFaults injects the faults of TestReplicatedPubendFaults, spread
// over the publishing time, each while the publisher still sends; it
// returns what it did, in order.
func (m *durableMesh) replicaFaults(ctx context.Context, pub *bgProc, publishFor time.Duration, cut func(int, string)) []string {
	t := m.t
	t.Helper()
	every := publishFor / 4
	var done []string
	at := time.Now()
	next := func(what string) {
		at = at.Add(every)
		time.Sleep(time.Until(at))
		if pub.exited() {
			t.Fatalf("the publisher finished before %s: lower SIFT_REPLICA_RATE\n%s", what, pub.stderr())
		}
	}

	next("the leader's kill")
	l := m.leaderOf(replicaNames)
	if l == "" {
		t.Fatalf("no replica leads p\n%s", m.logs())
	}
	m.killedLeader = time.Now()
	m.crash(l, 300*time.Millisecond)
	done = append(done, "kill -9 of the leader "+l+", restarted on its data folder")
	m.waitReplicas(ctx, replicaNames, "a leader after the kill", 30*time.Second, oneLeader)

	next("the wipe")
	l = m.leaderOf(replicaNames)
	w := replicaNames[(slices.Index(replicaNames, l)+1)%len(replicaNames)]
	m.nodes[w].proc.kill()
	if err := os.RemoveAll(filepath.Join(m.dir, w)); err != nil {
		t.Fatal(err)
	}
	m.nodes[w].flags = append(m.nodes[w].flags, "--replica-join")
	time.Sleep(300 * time.Millisecond)
	m.start(w, 1)
	joined := time.Now()
	m.waitReplicas(ctx, replicaNames, "the wiped replica "+w+" a voter again", 30*time.Second, func(sts map[string]replicaStatusView) bool {
		return sts[w].Voter && sts[w].Leader != "" && oneLeader(sts)
	})
	done = append(done, fmt.Sprintf("kill -9 of follower %s, data folder removed, restarted empty with --replica-join (a voter again after %v)",
		w, time.Since(joined).Round(time.Millisecond)))

	next("the partition")
	l = m.leaderOf(replicaNames)
	i := slices.Index(replicaNames, l)
	cut(i, "down")
	cutAt := time.Now()
	rest := slices.DeleteFunc(slices.Clone(replicaNames), func(n string) bool { return n == l })
	var electedTerm uint64
	m.waitReplicas(ctx, rest, "a new leader while "+l+" is cut off", 30*time.Second, func(sts map[string]replicaStatusView) bool {
		if !oneLeader(sts) {
			return false
		}
		electedTerm = sts[rest[0]].Term
		return true
	})
	elected := time.Since(cutAt)
	time.Sleep(max(0, 3*time.Second-time.Since(cutAt)))
	cut(i, "up")
	// After the heal, l has left the term it led in: every replica is at
	// least at the term elected without it, under one leader that all
	// name. That leader may be l again, at a later term: the first of
	// --replicas is the preferred leader and takes leadership back once it
	// has caught up.
	m.waitReplicas(ctx, replicaNames, "one leader after the partition healed", 30*time.Second, func(sts map[string]replicaStatusView) bool {
		if !oneLeader(sts) {
			return false
		}
		for _, st := range sts {
			if st.Term < electedTerm {
				return false
			}
		}
		return true
	})
	done = append(done, fmt.Sprintf("the leader %s cut off for %v (the others elected a leader after %v)",
		l, 3*time.Second, elected.Round(time.Millisecond)))
	return done
}

// oneLeader reports whether exactly one of the replicas runs the pubend
// and every one names it as the leader.
func oneLeader(sts map[string]replicaStatusView) bool {
	var leaders []string
	for n, st := range sts {
		if st.Leading {
			leaders = append(leaders, n)
		}
	}
	if len(leaders) != 1 {
		return false
	}
	for _, st := range sts {
		if st.Leader != leaders[0] {
			return false
		}
	}
	return true
}

// failoverFrom reads, from a complete log of every event, how long after
// the leader's kill the first event was assigned its tick: ticks are the
// assigning leader's clock in microseconds, and an event is acknowledged
// once its tick's entry commits, just after. A leader assigns ticks above
// the high-water mark its predecessor committed (rule T1), so this is an
// upper bound on the time from the kill to the first event a leader took
// after it.
func failoverFrom(path string, killed time.Time) (time.Duration, error) {
	l, err := readSubLog(path)
	if err != nil {
		return 0, err
	}
	k := killed.UnixMicro()
	for _, e := range l.events {
		if int64(e.tick) > k {
			return time.Duration(int64(e.tick)-k) * time.Microsecond, nil
		}
	}
	return 0, fmt.Errorf("%s: no event assigned a tick after the leader's kill", path)
}

// startReplicatedHub starts pubend p replicated on routers a, b and c,
// each linked to hub h, with no durable flags but the replicas', and
// waits until the replicas have a leader and h knows where p is hosted.
// The caller stops the mesh.
func startReplicatedHub(t *testing.T, ctx context.Context) *durableMesh {
	t.Helper()
	m := newDurableMesh(t, ctx, nil, map[string][]string{"h": nil, "a": {"h"}, "b": {"h"}, "c": {"h"}})
	m.noFlags = true
	for _, name := range replicaNames {
		m.nodes[name].flags = []string{"--pubend", replicaPubend, "--replicas", "a,b,c"}
	}
	m.startAll()
	m.waitReplicas(ctx, replicaNames, "a leader for p", 30*time.Second, oneLeader)
	m.waitHubHost(ctx, 30*time.Second)
	return m
}

// httpOf returns the HTTP addresses of the named routers, comma
// separated, as `sift admin pubend --http` takes them.
func (m *durableMesh) httpOf(names ...string) string {
	var out []string
	for _, name := range names {
		out = append(out, m.nodes[name].metrics)
	}
	return strings.Join(out, ",")
}

// subscribeAll writes n events to publish and starts a durable subscriber
// to all of them at h, killed at the end of the test if still running.
func (m *durableMesh) subscribeAll(t *testing.T, n int) ([]match.Event, string, *durableSub) {
	t.Helper()
	events := seqEvents(n, 25)
	eventsFile := writeEvents(t, m.dir, events)
	sub := m.newSub("all", `seq >= 1`, "h")
	m.startSub(sub)
	t.Cleanup(func() {
		if !sub.proc.exited() {
			sub.proc.kill()
		}
	})
	return events, eventsFile, sub
}

// publishReplicated starts a durable publisher of eventsFile to pubend p
// at rate events/s, knowing the routers of a, b and c and the addresses
// of routers started later.
func (m *durableMesh) publishReplicated(t *testing.T, ctx context.Context, eventsFile string, rate float64, later ...string) *bgProc {
	t.Helper()
	routers := append([]string{m.nodes["a"].addr, m.nodes["b"].addr, m.nodes["c"].addr}, later...)
	return background("pub", startProc(t, ctx, "sift", "pub", "--durable", "--pubend", replicaPubend,
		"--router", strings.Join(routers, ","), "--certs", m.certDir, "--rate", fmt.Sprint(rate), "--timeout", "60s", eventsFile))
}
