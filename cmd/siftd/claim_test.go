package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

var metricsReadyRE = regexp.MustCompile(`msg="metrics ready".* addr=(\S+)`)

// TestSubFiltersClaim runs two siftd processes r1 - r2 (the shallow
// table) and `sift sub --filters FILE --claim` at r2 with a file of nested
// filters (many cover one another), published at r1 with `sift pub`: the
// subscriber prints exactly the lines Scan over the file gives, in publish
// order, and r2's metrics show the claims it placed (so the filters were
// installed by claim, and what r2 forwarded to r1 still carries every
// matching event).
func TestSubFiltersClaim(t *testing.T) {
	const n, events = 3_000, 400
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	base := func(name string) []string {
		return []string{"--name", name, "--listen", "127.0.0.1:0", "--certs", certDir,
			"--data", filepath.Join(dir, name), "--table", "shallow"}
	}
	r1 := startProc(t, ctx, "siftd", base("r1")...)
	addr1 := r1.waitLine(t, ctx, readyRE)[1]
	r2 := startProc(t, ctx, "siftd", append(base("r2"), "--peer", addr1, "--metrics", "127.0.0.1:0")...)
	// r2 logs "metrics ready" before "router ready": wait for them in that order.
	metrics := r2.waitLine(t, ctx, metricsReadyRE)[1]
	addr2 := r2.waitLine(t, ctx, readyRE)[1]
	r1.waitLine(t, ctx, linkUpRE)
	r2.waitLine(t, ctx, linkUpRE)

	w, err := workload.Nested(workload.NestedConfig{Subscriptions: n, Events: events, Symbols: 500, BroadPricePercent: -1}, 23)
	if err != nil {
		t.Fatal(err)
	}
	var subs bytes.Buffer
	scan := match.NewScan()
	for i, f := range w.Filters {
		scan.Insert(match.ID(i), f)
		fmt.Fprintln(&subs, f)
	}
	subsFile, eventsFile := filepath.Join(dir, "subs.txt"), filepath.Join(dir, "events.jsonl")
	os.WriteFile(subsFile, subs.Bytes(), 0o644)
	var evBuf bytes.Buffer
	match.WriteEvents(&evBuf, w.Events)
	os.WriteFile(eventsFile, evBuf.Bytes(), 0o644)
	want := wantLines(scan, w.Events)
	if len(want) < 50 || len(want) == len(w.Events) {
		t.Fatalf("%d of %d events match: weak test", len(want), len(w.Events))
	}

	sub := startProc(t, ctx, "sift", "sub", "--router", addr2, "--certs", certDir, "--filters", subsFile, "--claim",
		"--count", fmt.Sprint(len(want)), "--timeout", "60s")
	if got := sub.waitLine(t, ctx, subFiltersReady)[1]; got != fmt.Sprint(n) {
		t.Fatalf("ready %s, want ready %d", got, n)
	}
	placed, refused := claimMetric(t, metrics, "placed"), claimMetric(t, metrics, "fallback")
	t.Logf("r2: %v claims placed, %v refused", placed, refused)
	if placed < n/6 {
		t.Fatalf("r2 placed %v claims of %d filters: the file was not installed by claim", placed, n)
	}
	out, err := runBin(t, ctx, nil, "sift", "pub", "--router", addr1, "--certs", certDir, eventsFile)
	if err != nil || out != fmt.Sprintf("published %d events\n", events) {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	if stderr, err := sub.wait(); err != nil {
		t.Fatalf("sub --filters --claim: %v\n%s", err, stderr)
	}
	checkLines(t, sub.stdout.String(), want, n)
	for i, r := range []*proc{r1, r2} {
		r.cmd.Process.Signal(syscall.SIGTERM)
		if stderr, err := r.wait(); err != nil {
			t.Fatalf("r%d after SIGTERM: %v\n%s", i+1, err, stderr)
		}
	}
}

// claimMetric reads sift_router_assist_placements_total{mode="claim"}
// with outcome from the metrics endpoint at addr (0 when absent).
func claimMetric(t *testing.T, addr, outcome string) float64 {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^sift_router_assist_placements_total\{mode="claim",outcome="` + outcome + `"\} (\S+)$`)
	m := re.FindSubmatch(body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("placements %s: %v", outcome, err)
	}
	return v
}
