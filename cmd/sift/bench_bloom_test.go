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

// TestBenchBloomTiny runs the sweep command at a tiny scale: table on
// stdout, a progress line per point on stderr, files under --out; a bad
// flag value stops it before anything runs.
func TestBenchBloomTiny(t *testing.T) {
	o := benchBloomOptions{terms: []int{10, 200}, filters: []int{200}, chains: []int{3}, events: 100, probes: 4,
		rounds: 1, hit: 0.2, minCPU: time.Millisecond, seed: 1, out: t.TempDir()}
	var stdout, stderr bytes.Buffer
	if err := runBenchBloom(context.Background(), &stdout, &stderr, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "whole chain") || strings.Count(stderr.String(), "bench bloom: point") != 2 {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	for _, f := range []string{"results.json", "results.csv", "inner.png", "fprate.png"} {
		if _, err := os.Stat(filepath.Join(o.out, f)); err != nil {
			t.Error(err)
		}
	}
	o.terms = []int{1}
	if err := runBenchBloom(context.Background(), &stdout, &stderr, o); err == nil || !strings.Contains(err.Error(), "terms") {
		t.Fatalf("1 term: %v", err)
	}
}
