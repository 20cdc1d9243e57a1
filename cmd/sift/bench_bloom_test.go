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

// TestBenchBloomMerge runs two pieces of a sweep with the command and
// joins them with --merge: one table with both points and both pieces,
// files under --out; a missing piece directory is an error.
func TestBenchBloomMerge(t *testing.T) {
	base := benchBloomOptions{filters: []int{200}, chains: []int{3}, events: 100, probes: 4,
		rounds: 1, hit: 0.2, minCPU: time.Millisecond, seed: 1, quiet: true}
	var dirs []string
	for _, n := range []int{10, 50} {
		o := base
		o.terms, o.out = []int{n}, t.TempDir()
		if err := runBenchBloom(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, o); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, o.out)
	}
	o := base
	o.merge, o.out = dirs, t.TempDir()
	var stdout bytes.Buffer
	if err := runBenchBloom(context.Background(), &stdout, &bytes.Buffer{}, o); err != nil {
		t.Fatal(err)
	}
	if strings.Count(stdout.String(), "piece ") != 2 || !strings.Contains(stdout.String(), "whole chain") {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(o.out, "speedup.png")); err != nil {
		t.Error(err)
	}
	o.merge = append(o.merge, filepath.Join(t.TempDir(), "missing"))
	if err := runBenchBloom(context.Background(), &stdout, &bytes.Buffer{}, o); err == nil || !strings.Contains(err.Error(), "--merge") {
		t.Fatalf("a missing piece: %v", err)
	}
}
