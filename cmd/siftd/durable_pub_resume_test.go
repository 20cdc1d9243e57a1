package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// ackedRE is how a failed `sift pub --durable` reports what was logged.
var ackedRE = regexp.MustCompile(`(\d+) of (\d+) events acknowledged \((none|events 1-(\d+) of the input)\); run again with --id (\S+) to publish the rest`)

// resumedRE is the last line of a `sift pub --durable` that resumed.
var resumedRE = regexp.MustCompile(`^published (\d+) events \((\d+) of them logged by an earlier run\)\n$`)

// TestDurablePubResume: one router (no durable flags) and a durable
// subscriber to every event. `sift pub --durable` of 900 events is cut
// off by the router's SIGKILL: it fails after --timeout saying how many
// events (the first N of the input) were acknowledged and which --id
// resumes. The router restarts; the same command again (same file, so
// the same default id) resumes after what the pubend logged, and a third
// run publishes nothing new. The subscriber's log holds each event once.
func TestDurablePubResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	m := newDurableMesh(t, ctx, nil, map[string][]string{"r": nil})
	m.noFlags = true
	m.startAll()
	defer m.stopAll()
	const n = 900
	events := seqEvents(n, 31)
	file := writeEvents(t, m.dir, events)
	s := m.newSub("all", `seq >= 1`, "r")
	m.startSub(s)
	defer func() {
		if !s.proc.exited() {
			s.proc.kill()
		}
	}()
	args := []string{"pub", "--durable", "--router", m.nodes["r"].addr, "--certs", m.certDir, "--rate", "600", "--timeout", "2s", file}
	pub := background("pub", startProc(t, ctx, "sift", args...))
	time.Sleep(700 * time.Millisecond)
	m.nodes["r"].proc.kill()
	if err := pub.wait(); err == nil {
		t.Fatalf("pub succeeded although its router was killed: %s", pub.p.stdout.String())
	}
	msg := ackedRE.FindStringSubmatch(pub.stderr())
	if msg == nil {
		t.Fatalf("the failed pub does not say what was acknowledged:\n%s", pub.stderr())
	}
	acked, _ := strconv.Atoi(msg[1])
	if msg[2] != fmt.Sprint(n) || acked == 0 || acked >= n || msg[4] != msg[1] {
		t.Fatalf("failed pub reports %q: want 0 < N < %d acknowledged, as events 1-N", msg[0], n)
	}
	t.Logf("first run: %s", msg[0])

	m.start("r", 0)
	out, err := runBin(t, ctx, nil, "sift", args...)
	got := resumedRE.FindStringSubmatch(out)
	if err != nil || got == nil || got[1] != fmt.Sprint(n) {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	if earlier, _ := strconv.Atoi(got[2]); earlier < acked {
		t.Fatalf("second run resumed after %d events, but %d were acknowledged before", earlier, acked)
	}
	t.Logf("second run: %s", out)
	// With the id the failure named, from another path: nothing new.
	other := writeEvents(t, t.TempDir(), events)
	out, err = runBin(t, ctx, nil, "sift", "pub", "--durable", "--router", m.nodes["r"].addr, "--certs", m.certDir, "--id", msg[5], other)
	if got := resumedRE.FindStringSubmatch(out); err != nil || got == nil || got[2] != fmt.Sprint(n) {
		t.Fatalf("third run with --id %s: %v\n%s", msg[5], err, out)
	}

	if c := waitLogs(ctx, []*durableSub{s}, []int{n}, 30*time.Second); c[0] != n {
		t.Errorf("subscriber has %d of %d events\n%s", c[0], n, m.logs())
	}
	if err := s.proc.stop(); err != nil {
		t.Errorf("sub: %v", err)
	}
	c, err := checkSubLog(s.file, s.parsed, events, false, nil, 0)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	t.Logf("subscriber: %s", c)
}
