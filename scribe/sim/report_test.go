package sim

import (
	"bytes"
	"encoding/json"
	"testing"
)

func render(t *testing.T, r Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b.String() + string(j)
}

// TestSizesSmall runs the sizes report at a small scale and checks its
// invariants and that the same seed gives the same bytes.
func TestSizesSmall(t *testing.T) {
	o := Options{Seed: 1, Nodes: 512, Groups: 5, Sizes: []int{11, 100, 512}}
	rep, err := RunSizes(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if row.TreeNodes < float64(row.GroupSize) || row.NonMemberForwarders < 0 {
			t.Errorf("size %d: %.1f tree nodes, %.1f non-member forwarders", row.GroupSize, row.TreeNodes, row.NonMemberForwarders)
		}
		if row.MostChildren < row.RootChildren {
			t.Errorf("size %d: most children %.1f below the root's %.1f", row.GroupSize, row.MostChildren, row.RootChildren)
		}
	}
	last := rep.Rows[len(rep.Rows)-1]
	if last.TreeNodes != 512 || last.NonMemberForwarders != 0 || last.EdgesPerMember >= 1 {
		t.Errorf("all nodes as members: %+v, want 512 tree nodes, no forwarders, edges per member below 1", last)
	}
	if first := rep.Rows[0]; first.EdgesPerMember <= last.EdgesPerMember || first.DistanceRatio <= last.DistanceRatio {
		t.Errorf("small groups should cost more per member than large: %+v vs %+v", first, last)
	}
	again, err := RunSizes(o)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := render(t, rep), render(t, again); a != b {
		t.Fatalf("same seed, different reports:\n%s\n%s", a, b)
	}
	o.Seed = 2
	other, err := RunSizes(o)
	if err != nil {
		t.Fatal(err)
	}
	if render(t, rep) == render(t, other) {
		t.Fatal("seeds 1 and 2 gave identical reports")
	}
}

func TestStateSmall(t *testing.T) {
	rep, err := RunState(Options{Seed: 1, Nodes: 512, GroupCount: 40, Size: 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TotalEntries < rep.BrokerSubscriptions-rep.Groups {
		t.Errorf("%d children entries for %d subscriptions: every member but a root is some node's child", rep.TotalEntries, rep.BrokerSubscriptions)
	}
	if got := rep.ChildrenEntries.Mean * float64(rep.Nodes); int(got+0.5) != rep.TotalEntries {
		t.Errorf("mean entries %.3f x %d nodes != total %d", rep.ChildrenEntries.Mean, rep.Nodes, rep.TotalEntries)
	}
	if rep.DistinctRoots < 1 || rep.DistinctRoots > rep.Groups {
		t.Errorf("%d distinct roots for %d groups", rep.DistinctRoots, rep.Groups)
	}
}

// tinyTopology keeps the transit-stub tests fast: 4 transit and 60 stub
// routers.
var tinyTopology = TransitStubConfig{
	TransitDomains: 2, TransitRouters: 2, StubsPerTransit: 3, StubRouters: 5,
	InterTransitDelay: [2]int32{20000, 40000}, IntraTransitDelay: [2]int32{5000, 15000},
	TransitStubDelay: [2]int32{2000, 6000}, IntraStubDelay: [2]int32{1000, 3000}, AccessDelay: [2]int32{200, 1000},
}

// TestPaperSmall runs the paper experiment on 2,000 nodes and 60 groups and
// checks the relations the paper reports: the remover caps children at 64
// and costs some extra join traffic, Scribe delays exceed IP multicast's,
// and Scribe's link stress lies between IP multicast's and naive unicast's
// maximum.
func TestPaperSmall(t *testing.T) {
	o := Options{Seed: 3, Nodes: 2000, Groups: 60, Topology: &tinyTopology}
	rep, err := RunPaper(o)
	if err != nil {
		t.Fatal(err)
	}
	off, on := rep.Runs[0], rep.Runs[1]
	if off.Entries.Max <= PaperCap || on.Entries.Max > PaperCap {
		t.Errorf("children entries max: %v without remover, %v with: want above and at most %d", off.Entries.Max, on.Entries.Max, PaperCap)
	}
	if on.Redirects == 0 || on.Join.MeanUsed <= off.Join.MeanUsed {
		t.Errorf("remover: %d redirects, join stress %.2f -> %.2f: want redirects and more join traffic", on.Redirects, off.Join.MeanUsed, on.Join.MeanUsed)
	}
	if off.RAD.Median < 1 || off.RMD.Median < 1 {
		t.Errorf("RAD %.2f, RMD %.2f: a tree cannot beat shortest paths", off.RAD.Median, off.RMD.Median)
	}
	if !(rep.IPMulticast.Max < off.Multicast.Max && off.Multicast.Max < rep.Unicast.Max) {
		t.Errorf("max link stress: IP %d, Scribe %d, unicast %d: want IP < Scribe < unicast", rep.IPMulticast.Max, off.Multicast.Max, rep.Unicast.Max)
	}
	if off.Join.Max != off.Multicast.Max {
		t.Errorf("without the remover joining and multicast stress should be identical: %d vs %d", off.Join.Max, off.Multicast.Max)
	}
	again, err := RunPaper(o)
	if err != nil {
		t.Fatal(err)
	}
	if render(t, rep) != render(t, again) {
		t.Fatal("same seed, different paper reports")
	}
}

// TestSmallGroupsCollapse checks that collapsing removes forwarders and
// lowers link stress, with every member still reached (RunSmall verifies
// delivery and fails otherwise).
func TestSmallGroupsCollapse(t *testing.T) {
	rep, err := RunSmall(Options{Seed: 1, Nodes: 3000, GroupCount: 300, Topology: &tinyTopology})
	if err != nil {
		t.Fatal(err)
	}
	if rep.CollapsedForwarders >= rep.Forwarders || rep.CollapseMessages == 0 {
		t.Errorf("forwarders %.1f -> %.1f with %d messages: want fewer", rep.Forwarders, rep.CollapsedForwarders, rep.CollapseMessages)
	}
	if rep.Collapsed.MeanUsed >= rep.Scribe.MeanUsed {
		t.Errorf("link stress %.2f -> %.2f after collapsing: want lower", rep.Scribe.MeanUsed, rep.Collapsed.MeanUsed)
	}
}

// TestFailureReport checks that both failures are repaired with every
// member reached exactly once, and that the report is deterministic.
func TestFailureReport(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rep, err := RunFailure(Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Cases {
			if !c.ExactlyOnce || c.Reached != c.Members || !c.RootHadReplica || c.DepthAfter < 1 {
				t.Errorf("seed %d: %+v", seed, c)
			}
			if c.Orphans > 0 && c.Scenario == "forwarder" && c.RepairJoins < int64(c.Orphans) {
				t.Errorf("seed %d: %d orphans rejoined with %d JOINs", seed, c.Orphans, c.RepairJoins)
			}
		}
		again, _ := RunFailure(Options{Seed: seed})
		if render(t, rep) != render(t, again) {
			t.Fatalf("seed %d: same seed, different failure reports", seed)
		}
	}
}
