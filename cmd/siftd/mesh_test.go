package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// linkUpRE matches a "link up" log line and captures the peer's name.
var linkUpRE = regexp.MustCompile(`msg="link up".* link=(\S+)`)

// TestChain runs three siftd processes linked in a chain r1 - r2 - r3 (r2
// dials r1, r3 dials r2), `sift sub` at r3 and r2 and `sift pub` at r1, and
// checks each subscriber's output against Scan over the published events:
// exactly its matching events, in order, after its "ready" (the subscribe
// acknowledged once the whole chain installed it). Readiness comes from
// log lines only.
func TestChain(t *testing.T) {
	for _, table := range []string{"poset", "forest"} {
		t.Run(table, func(t *testing.T) { testChain(t, table) })
	}
}

func testChain(t *testing.T, table string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	var routers []*proc
	var addrs []string
	for i, name := range []string{"r1", "r2", "r3"} {
		args := []string{"--name", name, "--listen", "127.0.0.1:0", "--certs", certDir,
			"--data", filepath.Join(dir, name), "--table", table}
		if i > 0 {
			args = append(args, "--peer", addrs[i-1])
		}
		p := startProc(t, ctx, "siftd", args...)
		addrs = append(addrs, p.waitLine(t, ctx, readyRE)[1])
		routers = append(routers, p)
	}
	for i, peers := range [][]string{{"r2"}, {"r1", "r3"}, {"r2"}} {
		got := map[string]bool{}
		for range peers {
			got[routers[i].waitLine(t, ctx, linkUpRE)[1]] = true
		}
		for _, p := range peers {
			if !got[p] {
				t.Fatalf("r%d: links up to %v, want %v", i+1, got, peers)
			}
		}
	}

	w, err := workload.Stock(workload.StockConfig{Subscriptions: 200, Events: 3000}, 11)
	if err != nil {
		t.Fatal(err)
	}
	eventsFile := filepath.Join(dir, "events.jsonl")
	var buf bytes.Buffer
	match.WriteEvents(&buf, w.Events)
	os.WriteFile(eventsFile, buf.Bytes(), 0o644)

	type subProc struct {
		at     string
		filter string
		want   []match.Event
		p      *proc
	}
	var subs []subProc
	for i, f := range pickFilters(w) {
		at := 2 - i%2 // r3, r2, r3, ...
		want := scanMatches(f, w.Events)
		args := []string{"sub", "--router", addrs[at], "--certs", certDir, "--timeout", "60s", "--count", fmt.Sprint(len(want)), f.String()}
		if len(want) == 0 {
			args = []string{"sub", "--router", addrs[at], "--certs", certDir, "--timeout", "1s", f.String()}
		}
		p := startProc(t, ctx, "sift", args...)
		p.waitLine(t, ctx, subReady)
		subs = append(subs, subProc{fmt.Sprintf("r%d", at+1), f.String(), want, p})
	}
	out, err := runBin(t, ctx, nil, "sift", "pub", "--router", addrs[0], "--certs", certDir, eventsFile)
	if err != nil || out != "published 3000 events\n" {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	for _, s := range subs {
		stderr, err := s.p.wait()
		if err != nil {
			t.Fatalf("sub %q at %s: %v\n%s", s.filter, s.at, err, stderr)
		}
		got, err := parseSubOutput(s.p.stdout.String())
		if err != nil {
			t.Fatalf("sub %q at %s: %v", s.filter, s.at, err)
		}
		if err := sameEvents(got, s.want); err != nil {
			t.Errorf("sub %q at %s: %v", s.filter, s.at, err)
		}
	}
	for i, r := range routers {
		r.cmd.Process.Signal(syscall.SIGTERM)
		if stderr, err := r.wait(); err != nil {
			t.Fatalf("r%d after SIGTERM: %v\n%s", i+1, err, stderr)
		}
	}
}
