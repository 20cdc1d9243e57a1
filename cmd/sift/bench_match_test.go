package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func smallBenchOptions(t *testing.T) benchMatchOptions {
	return benchMatchOptions{
		workload: "stock", subs: 300, events: 40, seed: 3, out: t.TempDir(),
		runs: 1, warmup: 5, check: -1, budget: time.Minute, quiet: true,
		indexes: []string{"scan", "expr"},
	}
}

func TestBenchMatchWritesTableAndFiles(t *testing.T) {
	o := smallBenchOptions(t)
	o.sweeps = []string{"symbols=50,100"}
	var stdout, stderr bytes.Buffer
	if err := runBenchMatch(&stdout, &stderr, o); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	rows := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[2] == "ok" {
			rows[f[1]]++
		}
	}
	if !strings.Contains(out, "workload stock:") || rows["expr"] != 2 || rows["scan"] != 2 {
		t.Fatalf("table:\n%s", out)
	}
	if stderr.Len() != 0 {
		t.Fatalf("--quiet wrote to stderr: %q", stderr.String())
	}
	for _, f := range []string{"results.json", "results.csv", "match_time.png", "memory.png"} {
		if _, err := os.Stat(filepath.Join(o.out, f)); err != nil {
			t.Fatalf("missing %s: %v", f, err)
		}
	}
}

func TestBenchMatchRejectsBadFlags(t *testing.T) {
	for name, change := range map[string]func(*benchMatchOptions){
		"files flags without files": func(o *benchMatchOptions) { o.subsFile = "x" },
		"files without files":       func(o *benchMatchOptions) { o.workload = "files" },
		"unknown workload":          func(o *benchMatchOptions) { o.workload = "nope" },
		"unknown index":             func(o *benchMatchOptions) { o.indexes = []string{"nope"} },
		"bad sweep":                 func(o *benchMatchOptions) { o.sweeps = []string{"subs"} },
		"bad set":                   func(o *benchMatchOptions) { o.sets = []string{"volatility=2"} },
		"zero runs":                 func(o *benchMatchOptions) { o.runs = 0 },
	} {
		o := smallBenchOptions(t)
		change(&o)
		var stdout, stderr bytes.Buffer
		if err := runBenchMatch(&stdout, &stderr, o); err == nil {
			t.Errorf("%s: no error", name)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: wrote a table before failing", name)
		}
	}
}

// TestBenchMatchScenario runs part of the hem-subs scenario (its default
// structures, two small sizes), checks the table, files and per-point
// results, then reruns it: every point is resumed from its file, so the
// rerun reports the same measures.
func TestBenchMatchScenario(t *testing.T) {
	o := benchMatchOptions{
		scenario: "hem-subs", sweeps: []string{"subs=200,400"}, events: 30, seed: 1, out: t.TempDir(),
		runs: 1, warmup: 5, check: -1, budget: time.Minute, quiet: true,
	}
	var first, second, stderr bytes.Buffer
	if err := runBenchMatch(&first, &stderr, o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fast", "tama", "rein", "opindex", "counting"} {
		if n := strings.Count(first.String(), " "+name+" "); n < 2 {
			t.Errorf("table has %s %d times, want one row per point:\n%s", name, n, first.String())
		}
	}
	points, _ := filepath.Glob(filepath.Join(o.out, "points", "*.json"))
	if len(points) != 10 {
		t.Fatalf("%d per-point files, want 10", len(points))
	}
	for _, f := range []string{"results.json", "results.csv", "match_time.png"} {
		if _, err := os.Stat(filepath.Join(o.out, f)); err != nil {
			t.Fatalf("missing %s: %v", f, err)
		}
	}
	if err := runBenchMatch(&second, &stderr, o); err != nil {
		t.Fatal(err)
	}
	if a, b := tableRows(first.String()), tableRows(second.String()); a != b {
		t.Fatalf("resumed run differs:\n%s\nvs\n%s", a, b)
	}
	o.scenario = "nope"
	if err := runBenchMatch(&second, &stderr, o); err == nil || !strings.Contains(err.Error(), "hem-skew") {
		t.Fatalf("unknown scenario: %v", err)
	}
}

// tableRows returns the table's result rows (lines naming a status).
func tableRows(table string) string {
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 2 && (f[2] == "ok" || f[2] == "skipped" || f[2] == "error") {
			rows = append(rows, line)
		}
	}
	return strings.Join(rows, "\n")
}
