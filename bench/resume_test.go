package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// TestResumeSkipsMeasuredPoints interrupts nothing but simulates it: a
// first run measures a sweep with per-point files; a rerun with one file
// removed measures only that (structure, point) and reports the same
// results for the others; a changed configuration measures everything
// again.
func TestResumeSkipsMeasuredPoints(t *testing.T) {
	dir := t.TempDir()
	builds := map[string]int{}
	counted := func(name string) Structure {
		return Structure{Name: name, New: func() match.Index { builds[name]++; return match.NewScan() }}
	}
	cfg := func(events int) Config {
		return Config{
			Spec:       Spec{Kind: KindHEM, Seed: 1, HEM: workload.HEMConfig{Subscriptions: 200, Events: events}},
			Sweeps:     []Sweep{{Knob: "width", Values: []string{"0.2", "0.5"}}},
			Structures: []Structure{counted("a"), counted("b")},
			Options:    Options{Runs: 1, Warmup: 5, Check: 5},
			ResumeDir:  dir,
		}
	}
	first, err := Run(cfg(20))
	if err != nil {
		t.Fatal(err)
	}
	if builds["a"] != 2 || builds["b"] != 2 {
		t.Fatalf("first run built %v, want 2 each", builds)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 4 {
		t.Fatalf("%d result files, want 4: %v", len(files), files)
	}
	var gone string
	for _, f := range files {
		if filepath.Base(f)[0] == 'b' && filepath.Base(f) > gone {
			gone = f
		}
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	second, err := Run(cfg(20))
	if err != nil {
		t.Fatal(err)
	}
	if builds["a"] != 2 || builds["b"] != 3 {
		t.Fatalf("rerun built %v, want a 2 and b 3", builds)
	}
	if len(second.Results) != 4 {
		t.Fatalf("rerun reported %d results", len(second.Results))
	}
	for i, r := range second.Results {
		if r.Structure == "a" && r.MeanNs != first.Results[i].MeanNs {
			t.Errorf("resumed result %d differs: %+v vs %+v", i, r, first.Results[i])
		}
	}
	if _, err := Run(cfg(30)); err != nil {
		t.Fatal(err)
	}
	if builds["a"] != 4 || builds["b"] != 5 {
		t.Fatalf("changed configuration built %v, want everything again", builds)
	}
}

func TestScenarios(t *testing.T) {
	for _, sc := range Scenarios() {
		spec := Spec{Kind: sc.Kind, Seed: 1}
		for _, s := range sc.Sets {
			k, v, _ := strings.Cut(s, "=")
			if err := spec.Set(k, v); err != nil {
				t.Fatalf("%s: %v", sc.Name, err)
			}
		}
		if _, _, err := grid(spec, sc.Sweeps(nil)); err != nil {
			t.Errorf("%s: %v", sc.Name, err)
		}
		if _, err := SelectStructures(sc.Structures); err != nil {
			t.Errorf("%s: %v", sc.Name, err)
		}
	}
	sc, err := LookupScenario("hem-subs")
	if err != nil {
		t.Fatal(err)
	}
	sw := sc.Sweeps([]Sweep{{Knob: "subs", Values: []string{"1000"}}, {Knob: "width", Values: []string{"0.4"}}})
	if len(sw) != 2 || sw[0].Values[0] != "1000" || sw[1].Knob != "width" {
		t.Errorf("merged sweeps %v", sw)
	}
	if _, err := LookupScenario("nope"); err == nil {
		t.Error("unknown scenario accepted")
	}
}

// TestResumeRetriesSkipped: a result skipped on the budget is measured
// again by the rerun.
func TestResumeRetriesSkipped(t *testing.T) {
	dir := t.TempDir()
	builds := 0
	cfg := tinyResumeConfig(dir, &builds)
	if _, err := Run(cfg); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	b, _ := os.ReadFile(files[0])
	os.WriteFile(files[0], []byte(strings.Replace(string(b), `"status": "ok"`, `"status": "skipped"`, 1)), 0o644)
	if _, err := Run(cfg); err != nil {
		t.Fatal(err)
	}
	if builds != 2 {
		t.Fatalf("built %d times, want the skipped point measured again", builds)
	}
}

// TestResumeRemeasuresOtherBuilds: a stored result measured by another
// build of the harness is measured again, unless ResumeAnyBuild says to
// reuse it, and the report names the build of every result.
func TestResumeRemeasuresOtherBuilds(t *testing.T) {
	dir := t.TempDir()
	builds := 0
	cfg := tinyResumeConfig(dir, &builds)
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Results[0].Build; got != CurrentBuild() || got == "" {
		t.Fatalf("result's build %q, want the running binary's %q", got, CurrentBuild())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	b, _ := os.ReadFile(files[0])
	other := strings.Replace(string(b), CurrentBuild(), "0123456789ab exe ffffffffffffffff", 1)
	if err := os.WriteFile(files[0], []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.ResumeAnyBuild = true
	rep, err = Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if builds != 1 || rep.Results[0].Build != "0123456789ab exe ffffffffffffffff" {
		t.Fatalf("with ResumeAnyBuild: built %d times, build %q; want the stored result reused", builds, rep.Results[0].Build)
	}
	var table strings.Builder
	rep.Results = append(rep.Results, Result{Structure: "t", Build: CurrentBuild()})
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "results from 2 builds") {
		t.Errorf("table of mixed builds does not say so:\n%s", table.String())
	}
	cfg.ResumeAnyBuild = false
	if rep, err = Run(cfg); err != nil {
		t.Fatal(err)
	}
	if builds != 2 || rep.Results[0].Build != CurrentBuild() {
		t.Fatalf("without ResumeAnyBuild: built %d times, build %q; want the other build's result measured again", builds, rep.Results[0].Build)
	}
}

// tinyResumeConfig is one structure (scan, counting its builds in *builds)
// on a tiny HEM workload, resuming from dir.
func tinyResumeConfig(dir string, builds *int) Config {
	return Config{
		Spec:       Spec{Kind: KindHEM, Seed: 1, HEM: workload.HEMConfig{Subscriptions: 100, Events: 10}},
		Structures: []Structure{{Name: "s", New: func() match.Index { *builds++; return match.NewScan() }}},
		Options:    Options{Runs: 1, Warmup: 2, Check: 2},
		ResumeDir:  dir,
	}
}
