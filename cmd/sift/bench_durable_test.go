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

func smallBenchDurableOptions(t *testing.T) benchDurableOptions {
	return benchDurableOptions{
		peer: "none", out: t.TempDir(), hops: 2, shbs: 1, subs: 4, groups: 2, publishers: 2, inFlight: 8,
		events: 200, payload: 20, latencyEvents: 10, rate: 1000, ackEvery: 8, ackIdle: 20 * time.Millisecond,
		runs: 1, seed: 1, stall: 20 * time.Second, quiet: true,
	}
}

// TestBenchDurablePeerNotBuilt: the default build has no JetStream peer,
// and --peer jetstream says how to build it, before starting anything.
func TestBenchDurablePeerNotBuilt(t *testing.T) {
	o := smallBenchDurableOptions(t)
	o.peer = "jetstream"
	var stdout, stderr bytes.Buffer
	err := runBenchDurable(context.Background(), &stdout, &stderr, o)
	if err == nil || !strings.Contains(err.Error(), "go build -tags natspeer") {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(o.out); len(entries) != 0 || stdout.Len() != 0 {
		t.Fatalf("a refused run wrote %d entries, stdout %q", len(entries), stdout.String())
	}
}

// TestBenchDurableSiftOnly runs the Sift side at a tiny scale through the
// command: table on stdout, files under --out.
func TestBenchDurableSiftOnly(t *testing.T) {
	o := smallBenchDurableOptions(t)
	var stdout, stderr bytes.Buffer
	if err := runBenchDurable(context.Background(), &stdout, &stderr, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "durable: 2 hops") || !strings.Contains(stdout.String(), "sift") {
		t.Fatalf("table:\n%s", stdout.String())
	}
	for _, f := range []string{"results.json", "results.csv", "throughput.png", "latency.png", "cpu.png", "runs.png"} {
		if _, err := os.Stat(filepath.Join(o.out, f)); err != nil {
			t.Error(err)
		}
	}
	o.hops = 1
	if err := runBenchDurable(context.Background(), &stdout, &stderr, o); err == nil || !strings.Contains(err.Error(), "hops") {
		t.Fatalf("one hop: %v", err)
	}
}
