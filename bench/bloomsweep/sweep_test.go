package bloomsweep

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSweepTiny runs a small sweep end to end: every figure filled, Bloom
// forwarding never drops a matching event (runPoint fails otherwise), the
// measured one-unmet false-positive rate agrees with the formula, the
// summary saturates at 1,000 terms, and the files are written.
func TestSweepTiny(t *testing.T) {
	var progress []int
	cfg := Config{
		Terms: []int{10, 100, 1000}, Filters: []int{300}, Chains: []int{3, 7}, Events: 300, Probes: 40,
		MinCPU: time.Millisecond, Rounds: 1, Seed: 4, Command: "test", Index: "bftree",
		Progress: func(done, total int, _ string) { progress = append(progress, done) },
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Points) != 3 || len(progress) != 4 || progress[3] != 3 {
		t.Fatalf("%d points, progress %v", len(rep.Points), progress)
	}
	for _, p := range rep.Points {
		if p.FirstExactNs <= 0 || p.FirstBloomNs <= 0 || p.InnerExactNs <= 0 || p.InnerWitnessNs <= 0 || p.InnerBloomNs <= 0 || p.InnerBloomWitnessNs <= 0 || len(p.Chains) != 2 {
			t.Fatalf("point %+v", p)
		}
		if p.BloomForward < p.ExactForward || p.ExactForward <= 0 || p.EntryBytes <= p.EventBytes {
			t.Fatalf("%d terms: forwards exact %.3f bloom %.3f, bytes %.0f/%.0f", p.Terms, p.ExactForward, p.BloomForward, p.EventBytes, p.EntryBytes)
		}
		for _, c := range p.Chains {
			if c.ExactNs <= 0 || c.BloomNs <= 0 || c.BloomWitnessNs <= 0 || c.BloomBytes < c.ExactBytes {
				t.Fatalf("%d terms, chain %+v", p.Terms, c)
			}
		}
		switch p.Terms {
		case 1000:
			if p.Saturated < 0.99 || p.BloomForward != p.ExactForward {
				t.Errorf("1000 terms: saturated %.3f, forwards %.3f vs exact %.3f", p.Saturated, p.BloomForward, p.ExactForward)
			}
		default:
			// A binomial estimate: within four standard errors, plus the
			// formula's own bias at small m (about 10% relative).
			se := math.Sqrt(p.FormulaFP * (1 - p.FormulaFP) / float64(p.ProbeCount))
			if p.Saturated > 0 || math.Abs(p.ProbeFP-p.FormulaFP) > 4*se+0.1*p.FormulaFP+1e-3 {
				t.Errorf("%d terms: probe FP %.4f over %d, formula %.4f (se %.4f), saturated %.3f",
					p.Terms, p.ProbeFP, p.ProbeCount, p.FormulaFP, se, p.Saturated)
			}
		}
	}
	dir := t.TempDir()
	if err := rep.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	var back Report
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil || json.Unmarshal(b, &back) != nil || len(back.Points) != 3 || back.Command != "test" {
		t.Fatalf("results.json: %v", err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil || strings.Count(string(csv), "\n") != 1+3*2 {
		t.Fatalf("results.csv: %v\n%s", err, csv)
	}
	for _, png := range []string{"inner.png", "speedup.png", "fprate.png", "bytes.png"} {
		if st, err := os.Stat(filepath.Join(dir, png)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", png, err)
		}
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), "whole chain") {
		t.Errorf("table: %v\n%s", err, table.String())
	}
}

func TestConfigInvalid(t *testing.T) {
	for name, c := range map[string]Config{
		"terms":   {Terms: []int{2}},
		"filters": {Filters: []int{0, 5}},
		"chain":   {Chains: []int{1}},
		"hit":     {Hit: 1.5},
		"events":  {Events: 3},
		"index":   {Index: "btree"},
	} {
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRunStopsMidPoint: a context that ends while a point is measured
// stops the point at once (its timing asks for far more CPU than the test
// waits), and Run returns the context's error.
func TestRunStopsMidPoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := Config{Terms: []int{10}, Filters: []int{200}, Chains: []int{3}, Events: 200, Probes: 2,
		MinCPU: time.Minute, Rounds: 3, Seed: 1, Command: "test", Index: "sbstree",
		Progress: func(done, _ int, _ string) {
			if done == 0 {
				time.AfterFunc(100*time.Millisecond, cancel) // once the point is under way
			}
		}}
	start := time.Now()
	_, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 20*time.Second {
		t.Fatalf("after %v: %v, want the point stopped by the context", time.Since(start), err)
	}
}
