package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// TestChainHeals: r1 - r2 - r3 as in TestChain, a `sift sub` at r3; the
// middle router is killed (SIGKILL) and restarted on the same address
// with the same data folder. r3 redials it, it redials r1, and both links
// resynchronise: the subscriber that stayed connected to r3 through the
// outage, and a new one made after the heal, get exactly their matching
// events published at r1 after the heal. Readiness by log lines only.
func TestChainHeals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	siftd := func(name, listen string, peers ...string) *proc {
		args := []string{"--name", name, "--listen", listen, "--certs", certDir, "--data", filepath.Join(dir, name)}
		for _, p := range peers {
			args = append(args, "--peer", p)
		}
		return startProc(t, ctx, "siftd", args...)
	}
	r1 := siftd("r1", "127.0.0.1:0")
	addr1 := r1.waitLine(t, ctx, readyRE)[1]
	addr2 := freeUDPAddr(t)
	r2 := siftd("r2", addr2, addr1)
	r2.waitLine(t, ctx, readyRE)
	r3 := siftd("r3", "127.0.0.1:0", addr2)
	addr3 := r3.waitLine(t, ctx, readyRE)[1]
	r1.waitLine(t, ctx, linkUpRE)
	r3.waitLine(t, ctx, linkUpRE)

	w, err := workload.Stock(workload.StockConfig{Subscriptions: 200, Events: 2000}, 5)
	if err != nil {
		t.Fatal(err)
	}
	filters := pickFilters(w)[:2]
	sub := func(f match.Filter) (*proc, []match.Event) {
		want := scanMatches(f, w.Events)
		p := startProc(t, ctx, "sift", "sub", "--router", addr3, "--certs", certDir, "--timeout", "60s", "--count", fmt.Sprint(len(want)), f.String())
		p.waitLine(t, ctx, subReady)
		return p, want
	}
	old, oldWant := sub(filters[0])

	r2.cmd.Process.Kill()
	r2.wait()
	r2 = siftd("r2", addr2, addr1)
	defer func() { r2.cmd.Process.Kill(); r2.wait() }()
	for _, p := range []*proc{r1, r2, r2, r3} {
		p.waitLine(t, ctx, linkUpRE)
	}
	late, lateWant := sub(filters[1])

	eventsFile := filepath.Join(dir, "events.jsonl")
	var buf bytes.Buffer
	match.WriteEvents(&buf, w.Events)
	os.WriteFile(eventsFile, buf.Bytes(), 0o644)
	if out, err := runBin(t, ctx, nil, "sift", "pub", "--router", addr1, "--certs", certDir, eventsFile); err != nil {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	for i, s := range []struct {
		p    *proc
		want []match.Event
	}{{old, oldWant}, {late, lateWant}} {
		stderr, err := s.p.wait()
		if err != nil {
			t.Fatalf("sub %q: %v\n%s", filters[i], err, stderr)
		}
		got, err := parseSubOutput(s.p.stdout.String())
		if err == nil {
			err = sameEvents(got, s.want)
		}
		if err != nil {
			t.Errorf("sub %q: %v", filters[i], err)
		}
	}
	for _, p := range []*proc{r1, r3} {
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait()
	}
}
