//go:build !natspeer

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func smallBenchNetOptions(t *testing.T) benchNetOptions {
	return benchNetOptions{
		peer: "none", out: t.TempDir(), workloads: []string{"topic"}, modes: []string{"exact"},
		routers: 2, subs: 3, events: 600, publishers: 1, window: 200, latencyEvents: 20,
		runs: 1, seed: 2, rate: 2000, selectivity: 0.02, stall: 20 * time.Second, duration: 200 * time.Millisecond, quiet: true,
	}
}

// TestBenchNetPeerNotBuilt: the default build has no NATS peer, and
// --peer nats says how to build it, before starting anything.
func TestBenchNetPeerNotBuilt(t *testing.T) {
	o := smallBenchNetOptions(t)
	o.peer = "nats"
	var stdout, stderr bytes.Buffer
	err := runBenchNet(context.Background(), &stdout, &stderr, o)
	if err == nil || !strings.Contains(err.Error(), "go build -tags natspeer") {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(o.out); len(entries) != 0 || stdout.Len() != 0 {
		t.Fatalf("a refused run wrote %d entries, stdout %q", len(entries), stdout.String())
	}
}

// TestBenchNetSiftOnly runs the Sift side at a tiny scale through the
// command: table on stdout, files under --out/topic.
func TestBenchNetSiftOnly(t *testing.T) {
	o := smallBenchNetOptions(t)
	var stdout, stderr bytes.Buffer
	if err := runBenchNet(context.Background(), &stdout, &stderr, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "workload topic:") || !strings.Contains(stdout.String(), "sift-exact") {
		t.Fatalf("table:\n%s", stdout.String())
	}
	for _, f := range []string{"results.json", "results.csv", "throughput.png", "latency.png"} {
		if _, err := os.Stat(filepath.Join(o.out, "topic", f)); err != nil {
			t.Error(err)
		}
	}
	o.modes = []string{"telepathy"}
	if err := runBenchNet(context.Background(), &stdout, &stderr, o); err == nil || !strings.Contains(err.Error(), "telepathy") {
		t.Fatalf("unknown mode: %v", err)
	}
}
