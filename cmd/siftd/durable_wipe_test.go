package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
)

// TestDurableEmptyDiskRestart: routers a - b with no durable flags, a
// durable subscriber "ref" to every event at a and "s" to every event at
// b, a durable publisher at a. While it publishes, b is SIGKILLed, its
// data folder removed, and b restarted empty (the subscriber process
// stays up and reconnects by itself, presenting its CT). What the package
// doc promises: pubend a holds release at what b's SHB reported before
// the wipe (durable's pubend_wiped.go) until s is registered again, so ref
// and s are both complete: every event once, in order. b's own pubend lost
// its log with the disk: s may get a gap on it (no event was published
// there), never on a.
func TestDurableEmptyDiskRestart(t *testing.T) {
	const n, rate = 4000, 1000.0
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	m := newDurableMesh(t, ctx, nil, map[string][]string{"a": nil, "b": {"a"}})
	m.noFlags = true
	m.startAll()
	defer m.stopAll()
	m.waitDirectory(ctx, "", 20*time.Second)
	events := seqEvents(n, 41)
	file := writeEvents(t, m.dir, events)
	ref, s := m.newSub("ref", `seq >= 1`, "a"), m.newSub("s", `seq >= 1`, "b")
	subs := []*durableSub{ref, s}
	for _, x := range subs {
		m.startSub(x)
	}
	defer func() {
		for _, x := range subs {
			if !x.proc.exited() {
				x.proc.kill()
			}
		}
	}()
	pub := background("pub", startProc(t, ctx, "sift", "pub", "--durable", "--router", m.nodes["a"].addr,
		"--certs", m.certDir, "--rate", fmt.Sprint(rate), "--timeout", "60s", file))
	time.Sleep(1500 * time.Millisecond)
	m.nodes["b"].proc.kill()
	if err := os.RemoveAll(filepath.Join(m.dir, "b")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	m.start("b", 1)
	if pub.exited() {
		t.Fatalf("the publisher finished before b came back: raise n")
	}
	if err := pub.wait(); err != nil || !publishedRE.MatchString(pub.p.stdout.String()) {
		t.Fatalf("durable pub: %v\n%s\n%s", err, pub.p.stdout.String(), pub.stderr())
	}
	if got := waitLogs(ctx, []*durableSub{ref}, []int{n}, 60*time.Second); got[0] < n {
		t.Fatalf("ref logged %d of %d events\n%s", got[0], n, m.logs())
	}
	ticks, err := ticksOf(ref.file)
	if err != nil {
		t.Fatal(err)
	}
	last := ticks[n]
	if ct := waitCT(ctx, s.file, last.pubend, last.tick, 60*time.Second); ct < last.tick {
		t.Fatalf("s reached tick %d of %s, not the last event's %d\n%s", ct, last.pubend, last.tick, m.logs())
	}
	for _, x := range subs {
		if err := x.proc.stop(); err != nil {
			t.Errorf("sub %s after SIGTERM: %v\n%s", x.id, err, x.proc.stderr())
		}
	}
	if c, err := checkSubLog(ref.file, ref.parsed, events, false, nil, 0); err != nil {
		t.Fatalf("ref: %s: %v", c, err)
	}
	c, err := checkSubLog(s.file, s.parsed, events, true, ticks, durable.MaxTick)
	if err != nil || c.missing > 0 {
		t.Fatalf("s: %s: %v\n%s", c, err, m.logs())
	}
	l, err := readSubLog(s.file)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range l.gaps {
		if g.Pubend != "b" {
			t.Fatalf("s: gap %v on pubend %s, which kept its disk\n%s", g.Gap, g.Pubend, m.logs())
		}
	}
	t.Logf("ref complete; s complete after b's empty-disk restart: %s", c)
}
