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
