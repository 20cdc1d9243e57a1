package poset

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// TestTableMergeStock is a differential test on the stock workload: a
// merging table with two neighbours gets 2,000 subscriptions from clients
// and from neighbour 2, then loses a seeded random half of them. After
// each phase, for every workload event, a neighbour holds a matching
// merged filter iff a subscription from elsewhere matches (brute force),
// no two filters forwarded to a neighbour merge perfectly, and what the
// neighbour holds (the updates applied in order) is what the table says.
func TestTableMergeStock(t *testing.T) {
	const seed = 3
	t.Logf("seed %d", seed)
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 2000, Events: 500, Symbols: 100}, seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 4))
	tab, err := NewTable(TableConfig{Neighbours: []Iface{1, 2}, Merge: true})
	if err != nil {
		t.Fatal(err)
	}
	held := neighbourView{}
	apply := func(us []Update) { held.apply(t, us) }
	subs := make([]tableSubRec, len(w.Filters))
	for i, f := range w.Filters {
		subs[i] = tableSubRec{from: Iface(3 + rng.IntN(3)), f: f}
		if rng.IntN(4) == 0 {
			subs[i].from = 2
		}
		us, err := tab.Subscribe(subs[i].from, f)
		if err != nil {
			t.Fatal(err)
		}
		apply(us)
	}
	check := func(phase string, live []tableSubRec) {
		for _, nb := range []Iface{1, 2} {
			got := slices.Clone(held[nb])
			slices.SortFunc(got, match.Filter.Compare)
			fwd := tab.Forwarded(nb)
			if !slices.EqualFunc(got, fwd, match.Filter.Equal) {
				t.Fatalf("%s: neighbour %d holds %d filters, table forwarded %d", phase, nb, len(got), len(fwd))
			}
			checkNoPerfectPair(t, fwd)
			for _, e := range w.Events {
				sent := slices.ContainsFunc(fwd, func(f match.Filter) bool { return f.Matches(e) })
				want := slices.ContainsFunc(live, func(s tableSubRec) bool { return s.from != nb && s.f.Matches(e) })
				if sent != want {
					t.Fatalf("%s: event %s to %d: forwarded %v, want %v", phase, e, nb, sent, want)
				}
			}
			t.Logf("%s: %d filters forwarded to %d", phase, len(fwd), nb)
		}
	}
	check("subscribed", subs)
	rng.Shuffle(len(subs), func(i, j int) { subs[i], subs[j] = subs[j], subs[i] })
	for _, s := range subs[len(subs)/2:] {
		us, err := tab.Unsubscribe(s.from, s.f)
		if err != nil {
			t.Fatal(err)
		}
		apply(us)
	}
	check("half unsubscribed", subs[:len(subs)/2])
}
