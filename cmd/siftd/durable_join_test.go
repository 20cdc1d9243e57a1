package main

import (
	"context"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
)

// TestDurableJoinLeave: routers a - b (no durable flags) with a durable
// subscriber at a; router c joins (linked to b) and publishes durably:
// the subscriber at a, subscribed before c existed, receives every event
// of c's pubend exactly once, in order, and c's pubend waits for the three
// SHBs. Then c leaves (SIGTERM) while a's pubend keeps publishing: a's
// pubend releases nothing past what c's SHB last reported (release stays
// safe for c's possible subscribers), and releases again once c is back.
func TestDurableJoinLeave(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	m := newDurableMesh(t, ctx, nil, map[string][]string{"a": nil, "b": {"a"}, "c": {"b"}})
	m.noFlags = true
	m.start("a", 0)
	m.start("b", 1)
	defer m.stopAll()
	s := m.newSub("s", `seq >= 1`, "a")
	m.startSub(s)
	defer func() {
		if !s.proc.exited() {
			s.proc.kill()
		}
	}()
	m.start("c", 1)
	m.waitDirectory(ctx, "", 20*time.Second)
	const n = 500
	evC := seqEvents(n, 51)
	out, err := runBin(t, ctx, nil, "sift", "pub", "--durable", "--router", m.nodes["c"].addr, "--certs", m.certDir, writeEvents(t, t.TempDir(), evC))
	if err != nil || !publishedRE.MatchString(out) {
		t.Fatalf("pub at c: %v\n%s", err, out)
	}
	if got := waitLogs(ctx, []*durableSub{s}, []int{n}, 30*time.Second); got[0] != n {
		t.Fatalf("s has %d of c's %d events\n%s", got[0], n, m.logs())
	}
	l, err := readSubLog(s.file)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkPubendLog(l, "c", s.parsed, evC); err != nil || len(l.gaps) > 0 {
		t.Fatalf("s: %v, gaps %v", err, l.gaps)
	}

	// c leaves: a's pubend must not release past what c's SHB last
	// reported, however much a publishes meanwhile.
	if err := m.nodes["c"].proc.stop(); err != nil {
		t.Fatalf("c after SIGTERM: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	reportedC := func() durable.Tick {
		t.Helper()
		ps, err := m.pubendViews("a")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Pubend == "a" {
				return p.Reported["c/shb"]
			}
		}
		t.Fatal("a does not list its pubend")
		return 0
	}
	cLast := reportedC()
	evA := seqEvents(300, 52)
	if out, err := runBin(t, ctx, nil, "sift", "pub", "--durable", "--router", m.nodes["a"].addr, "--certs", m.certDir, writeEvents(t, t.TempDir(), evA)); err != nil || !publishedRE.MatchString(out) {
		t.Fatalf("pub at a: %v\n%s", err, out)
	}
	if got := waitLogs(ctx, []*durableSub{s}, []int{n + len(evA)}, 30*time.Second); got[0] != n+len(evA) {
		t.Fatalf("s has %d of %d events", got[0], n+len(evA))
	}
	time.Sleep(time.Second) // several report intervals
	rel, err := m.released("a", "a")
	if err != nil {
		t.Fatal(err)
	}
	if now := reportedC(); now != cLast || rel > cLast {
		t.Fatalf("with c away, pubend a released up to %d, c's SHB reported %d then %d: release passed an absent SHB", rel, cLast, now)
	}
	m.start("c", 1)
	l, _ = readSubLog(s.file)
	lastA := durable.Tick(0)
	for _, e := range l.events {
		if e.pubend == "a" {
			lastA = e.tick
		}
	}
	end := time.Now().Add(20 * time.Second)
	for {
		rel, err := m.released("a", "a")
		if err == nil && rel >= lastA {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("c is back, but pubend a released only %d (%v), not past %d\n%s", rel, err, lastA, m.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := checkPubendLog(l, "a", s.parsed, evA); err != nil {
		t.Fatal(err)
	}
	if err := s.proc.stop(); err != nil {
		t.Errorf("sub: %v", err)
	}
}
