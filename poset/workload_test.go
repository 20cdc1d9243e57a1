package poset_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
	_ "github.com/sift-pubsub/sift/poset"
)

// TestRegisteredIndexesAgreeWithScan builds the registered poset and forest
// indexes (as `sift match --index` does) from the stock, HEM and nested
// (covering-heavy) workloads and compares every event's matches with Scan,
// then again after deleting a random half of the subscriptions.
func TestRegisteredIndexesAgreeWithScan(t *testing.T) {
	const seed = 7
	t.Logf("seed %d", seed)
	stock, err := workload.Stock(workload.StockConfig{Subscriptions: 3000, Events: 300}, seed)
	if err != nil {
		t.Fatal(err)
	}
	hem, err := workload.HEM(workload.HEMConfig{Subscriptions: 1500, Events: 200, Width: 0.6, Predicates: 4, Attributes: 8}, seed)
	if err != nil {
		t.Fatal(err)
	}
	nested, err := workload.Nested(workload.NestedConfig{Subscriptions: 3000, Events: 300}, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		name string
		w    workload.Workload
	}{{"stock", stock}, {"hem", hem}, {"nested", nested}} {
		for _, name := range []string{"poset", "forest"} {
			idx, err := match.NewIndex(name)
			if err != nil {
				t.Fatal(err)
			}
			scan := match.NewScan()
			ids := make([]match.ID, len(w.w.Filters))
			for i := range ids {
				ids[i] = match.ID(i)
			}
			if err := match.Load(idx, ids, w.w.Filters); err != nil {
				t.Fatal(err)
			}
			match.Load(scan, ids, w.w.Filters)
			compare(t, name+"/"+w.name, idx, scan, w.w.Events)
			rng := rand.New(rand.NewPCG(seed, 3))
			for _, i := range rng.Perm(len(ids))[:len(ids)/2] {
				idx.Delete(ids[i])
				scan.Delete(ids[i])
			}
			compare(t, name+"/"+w.name+"/after deletes", idx, scan, w.w.Events)
		}
	}
}

func compare(t *testing.T, what string, idx match.Index, scan *match.Scan, events []match.Event) {
	t.Helper()
	total := 0
	for n, e := range events {
		got := match.SortIDs(idx.Match(e, nil))
		want := match.SortIDs(scan.Match(e, nil))
		if !slices.Equal(got, want) {
			t.Fatalf("%s: event %d %s: %d matches, scan %d", what, n, e, len(got), len(want))
		}
		total += len(want)
	}
	if total == 0 {
		t.Fatalf("%s: no event matched anything; the comparison proves nothing", what)
	}
}
