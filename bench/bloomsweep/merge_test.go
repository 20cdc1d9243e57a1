package bloomsweep

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMergePiecesIsWholeSweep runs a sweep whole and in two pieces (one
// per filters value, read back from their files) and checks that the
// merge has the whole sweep's points in its order, with the same
// workload-determined figures (the points are the same workloads whatever
// the piece), the union of the setups and both pieces recorded; and that
// a point measured twice or pieces run with other parameters are refused.
func TestMergePiecesIsWholeSweep(t *testing.T) {
	cfg := Config{Terms: []int{10, 50}, Filters: []int{200, 300}, Chains: []int{3}, Events: 200, Probes: 10,
		MinCPU: time.Millisecond, Rounds: 1, Seed: 9, Command: "whole", Index: "sbstree"}
	whole, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pieces []*Report
	for _, f := range []int{300, 200} { // out of order: the merge sorts
		c := cfg
		c.Filters, c.Command = []int{f}, "piece"
		p, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := p.WriteFiles(dir); err != nil {
			t.Fatal(err)
		}
		if p, err = ReadReport(dir); err != nil {
			t.Fatal(err)
		}
		pieces = append(pieces, p)
	}
	m, err := Merge("merge", pieces)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Points) != len(whole.Points) || len(m.Pieces) != 2 || m.Command != "merge" ||
		len(m.Config.Filters) != 2 || m.Config.Filters[0] != 200 || len(m.Config.Terms) != 2 {
		t.Fatalf("merged %d points, %d pieces, setup %+v", len(m.Points), len(m.Pieces), m.Config)
	}
	for i, w := range whole.Points {
		g := m.Points[i]
		if g.Terms != w.Terms || g.Filters != w.Filters || g.Fill != w.Fill || g.ExactForward != w.ExactForward ||
			g.BloomForward != w.BloomForward || g.LinkFP != w.LinkFP || g.ProbeFP != w.ProbeFP || g.EventBytes != w.EventBytes {
			t.Fatalf("point %d: merged %+v, whole sweep %+v", i, g, w)
		}
	}
	var table strings.Builder
	if err := m.WriteTable(&table); err != nil || strings.Count(table.String(), "piece ") != 2 {
		t.Fatalf("table: %v\n%s", err, table.String())
	}
	if _, err := Merge("twice", []*Report{pieces[0], pieces[0]}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("a point measured twice: %v", err)
	}
	other := *pieces[1]
	other.Config.Events++
	if _, err := Merge("other", []*Report{pieces[0], &other}); err == nil || !strings.Contains(err.Error(), "other parameters") {
		t.Fatalf("pieces of other setups: %v", err)
	}
	if _, err := Merge("none", nil); err == nil {
		t.Fatal("merged no reports")
	}
}

func TestPlotTerms(t *testing.T) {
	for _, tc := range []struct{ terms, want []int }{
		{[]int{10, 50}, []int{10, 50}},
		{[]int{10, 20, 50, 100, 200, 500, 1000}, []int{10, 50, 200, 1000}},
		{[]int{1, 2, 3, 4, 5}, []int{1, 2, 3, 5}},
	} {
		rep := &Report{Config: Setup{Terms: tc.terms}}
		if got := rep.plotTerms(); !slices.Equal(got, tc.want) {
			t.Errorf("plotTerms(%v) = %v, want %v", tc.terms, got, tc.want)
		}
	}
}
