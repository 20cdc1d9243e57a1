package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// dropOne is a deliberately broken index: Scan that loses the last match
// of every event with matches.
type dropOne struct{ *match.Scan }

func (d dropOne) Match(e match.Event, dst []match.ID) []match.ID {
	n := len(dst)
	dst = d.Scan.Match(e, dst)
	if len(dst) > n {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// duplicator returns one match twice, which a set comparison would miss.
type duplicator struct{ *match.Scan }

func (d duplicator) Match(e match.Event, dst []match.ID) []match.ID {
	n := len(dst)
	dst = d.Scan.Match(e, dst)
	if len(dst) > n {
		dst = append(dst, dst[n])
	}
	return dst
}

// slow is Scan taking at least 10 ms per event: far over any budget the
// tests set, whatever the machine's load, while Scan stays far under.
type slow struct{ *match.Scan }

func (s slow) Match(e match.Event, dst []match.ID) []match.ID {
	time.Sleep(10 * time.Millisecond)
	return s.Scan.Match(e, dst)
}

// allCandidates is Scan posing as a Bloom structure whose raw candidates
// are every subscription.
type allCandidates struct{ *match.Scan }

func (a allCandidates) MatchRaw(e match.Event, dst []match.ID) []match.ID {
	return append(dst, a.IDs()...)
}

func (a allCandidates) Stats() string { return "all candidates" }

func structure(name string, wrap func(*match.Scan) match.Index) Structure {
	return Structure{Name: name, New: func() match.Index { return wrap(match.NewScan()) }}
}

var scanStructure = structure("scan", func(s *match.Scan) match.Index { return s })

// smallHEM matches often enough for the checks to see matches: wide
// predicates, few of them.
func smallHEM() Spec {
	return Spec{Kind: KindHEM, Seed: 5, HEM: workload.HEMConfig{
		Subscriptions: 300, Events: 60, Attributes: 6, Predicates: 2, Width: 0.6, Domain: 1000,
	}}
}

func TestCheckCatchesBrokenIndexes(t *testing.T) {
	for _, broken := range []Structure{
		structure("drop-one", func(s *match.Scan) match.Index { return dropOne{s} }),
		structure("duplicator", func(s *match.Scan) match.Index { return duplicator{s} }),
	} {
		t.Run(broken.Name, func(t *testing.T) {
			_, err := Run(Config{Spec: smallHEM(), Structures: []Structure{scanStructure, broken}})
			var me *MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("Run returned %v, want a *MismatchError", err)
			}
			if me.Structure != broken.Name || len(me.Missing)+len(me.Extra) == 0 {
				t.Fatalf("mismatch %+v does not name %s with a difference", me, broken.Name)
			}
		})
	}
}

func TestCorrectStructuresPass(t *testing.T) {
	rep, err := Run(Config{
		Spec:       smallHEM(),
		Structures: []Structure{scanStructure, {Name: ExprName, New: func() match.Index { return NewExpr() }}},
		Options:    Options{Runs: 2, Warmup: 5, Check: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Status != StatusOK || r.Checked != 60 || r.Runs != 2 || r.MeanNs <= 0 || r.P99Ns < r.MedianNs {
			t.Fatalf("result %+v: want ok, 60 checked, 2 runs, positive times with p99 >= median", r)
		}
		if r.MatchesPerEvent <= 0 {
			t.Fatalf("%s: no matches per event on a wide workload", r.Structure)
		}
	}
	if rep.Results[0].MatchesPerEvent != rep.Results[1].MatchesPerEvent {
		t.Fatalf("scan and expr differ in matches per event: %v vs %v", rep.Results[0].MatchesPerEvent, rep.Results[1].MatchesPerEvent)
	}
}

func TestBudgetSkipsAndMarks(t *testing.T) {
	spec := smallHEM()
	spec.HEM.Events = 200
	rep, err := Run(Config{
		Spec:       spec,
		Sweeps:     []Sweep{{Knob: "subs", Values: []string{"100", "200"}}},
		Structures: []Structure{scanStructure, structure("slow", func(s *match.Scan) match.Index { return slow{s} })},
		// A second: Scan needs a few ms here even on a loaded machine, slow
		// at least 2 s.
		Options: Options{Warmup: 10, Budget: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 4 {
		t.Fatalf("%d results, want 4 (skipped ones kept)", len(rep.Results))
	}
	for _, r := range rep.Results {
		switch {
		case r.Structure == "scan" && r.Status != StatusOK:
			t.Errorf("scan at %v: %s %s", r.Point, r.Status, r.Reason)
		case r.Structure == "slow" && (r.Status != StatusSkipped || !strings.Contains(r.Reason, "budget")):
			t.Errorf("slow at %v: status %s reason %q, want skipped over budget", r.Point, r.Status, r.Reason)
		}
	}
	if last := rep.Results[3]; !strings.Contains(last.Reason, "smaller point") {
		t.Errorf("slow at the larger point: reason %q, want a prediction from the smaller point", last.Reason)
	}
}

func TestBudgetPredictsOnlyAlongSize(t *testing.T) {
	spec := smallHEM()
	spec.HEM.Events = 200
	rep, err := Run(Config{
		Spec:       spec,
		Sweeps:     []Sweep{{Knob: "width", Values: []string{"0.5", "0.6"}}},
		Structures: []Structure{structure("slow", func(s *match.Scan) match.Index { return slow{s} })},
		Options:    Options{Warmup: 10, Budget: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[1]; r.Status != StatusSkipped || strings.Contains(r.Reason, "smaller point") {
		t.Fatalf("width=0.6: %s %q; want skipped on its own measure, not predicted from another width", r.Status, r.Reason)
	}
}

func TestBloomMeasures(t *testing.T) {
	rep, err := Run(Config{
		Spec:       smallHEM(),
		Structures: []Structure{structure("all", func(s *match.Scan) match.Index { return allCandidates{s} })},
		Options:    Options{Runs: 1, Warmup: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.CandidatesPerEvent == nil || *r.CandidatesPerEvent != 300 {
		t.Fatalf("candidates per event %v, want 300", r.CandidatesPerEvent)
	}
	if r.FalsePositiveRate == nil || *r.FalsePositiveRate != 1 {
		t.Fatalf("false-positive rate %v, want 1 when every non-match is a candidate", r.FalsePositiveRate)
	}
	if r.Stats != "all candidates" {
		t.Fatalf("stats %q", r.Stats)
	}
}

func TestRunRejectsBadConfigs(t *testing.T) {
	good := []Structure{scanStructure}
	for name, cfg := range map[string]Config{
		"no structures": {Spec: smallHEM()},
		"bad kind":      {Spec: Spec{Kind: "nope"}, Structures: good},
		"bad knob":      {Spec: smallHEM(), Structures: good, Sweeps: []Sweep{{Knob: "colour", Values: []string{"1"}}}},
		"bad value":     {Spec: smallHEM(), Structures: good, Sweeps: []Sweep{{Knob: "width", Values: []string{"2"}}}},
		"swept twice":   {Spec: smallHEM(), Structures: good, Sweeps: []Sweep{{"subs", []string{"1"}}, {"subs", []string{"2"}}}},
		"missing files": {Spec: Spec{Kind: KindFiles, SubsFile: "/nonexistent/s", EventsFile: "/nonexistent/e"}, Structures: good},
	} {
		if _, err := Run(cfg); err == nil {
			t.Errorf("%s: Run succeeded, want an error", name)
		}
	}
}

func TestSummarize(t *testing.T) {
	var ts []time.Duration
	for i := 100; i >= 1; i-- {
		ts = append(ts, time.Duration(i))
	}
	mean, median, p99 := summarize(ts)
	if mean != 50.5 || median != 50 || p99 != 99 {
		t.Fatalf("summarize(1..100) = %v, %v, %v; want 50.5, 50, 99", mean, median, p99)
	}
	if got := Median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Fatalf("medianOf = %v, want 2.5", got)
	}
}

func TestDiffIDs(t *testing.T) {
	missing, extra := diffIDs([]match.ID{1, 2, 4}, []match.ID{2, 3, 4, 4})
	if len(missing) != 1 || missing[0] != 1 || len(extra) != 2 || extra[0] != 3 || extra[1] != 4 {
		t.Fatalf("diffIDs: missing %v, extra %v", missing, extra)
	}
}

func TestStructuresIncludeEveryFamily(t *testing.T) {
	have := map[string]bool{}
	for _, s := range Structures() {
		have[s.Name] = true
	}
	for _, want := range []string{"scan", "fast", "poset", "forest", "bftree", "sbstree", ExprName} {
		if !have[want] {
			t.Errorf("structure %s missing from %v", want, have)
		}
	}
	if last := Structures()[len(Structures())-1]; last.Name != ExprName {
		t.Errorf("expr should come last, after the registered indexes, not %s", last.Name)
	}
}
