package workload

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

func TestNestedDeterministicAndNesting(t *testing.T) {
	a, err := Nested(NestedConfig{Subscriptions: 300, Events: 40}, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Nested(NestedConfig{Subscriptions: 300, Events: 40}, 5)
	other, _ := Nested(NestedConfig{Subscriptions: 300, Events: 40}, 6)
	as, ae := files(t, a)
	bs, be := files(t, b)
	xs, _ := files(t, other)
	if !bytes.Equal(as, bs) || !bytes.Equal(ae, be) {
		t.Fatal("seed 5 gave different files on two runs")
	}
	if bytes.Equal(as, xs) {
		t.Fatal("seeds 5 and 6 gave the same subscriptions")
	}
	small, _ := Nested(NestedConfig{Subscriptions: 100, Events: 5}, 5)
	for i, f := range small.Filters {
		if !f.Equal(a.Filters[i]) {
			t.Fatalf("subscription %d differs with fewer subscriptions/events: %s vs %s", i, f, a.Filters[i])
		}
	}
	for i, e := range small.Events {
		if !e.Equal(a.Events[i]) {
			t.Fatalf("event %d differs with fewer events", i)
		}
	}
}

// coveredShare returns the share of filters covered by another filter of
// the set (by index; equal filters count), by brute force.
func coveredShare(fs []match.Filter) float64 {
	n := 0
	for i, f := range fs {
		for j, g := range fs {
			if i != j && match.Covers(g, f) {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(fs))
}

// TestNestedShape: the shares of each kind are as configured, every
// filter is satisfiable, the workload is covering-heavy (far more filters
// covered by another than in the stock workload) and events match.
func TestNestedShape(t *testing.T) {
	w, err := Nested(NestedConfig{Subscriptions: 600, Events: 200}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var bySymbol, byPrice int
	for _, f := range w.Filters {
		if !match.Satisfiable(f) {
			t.Fatalf("unsatisfiable filter %s", f)
		}
		switch attrs := f.Attrs(); {
		case f.Len() == 1 && attrs[0] == "symbol":
			bySymbol++
		case f.Len() == 2 && len(attrs) == 1 && attrs[0] == "price":
			byPrice++
		case f.Len() != 3 || len(attrs) != 2:
			t.Fatalf("unexpected filter %s", f)
		}
	}
	if bySymbol < 3 || bySymbol > 30 || byPrice < 6 || byPrice > 40 {
		t.Errorf("%d symbol-only and %d price-only filters of 600, want about 12 and 18", bySymbol, byPrice)
	}
	stock, _ := Stock(StockConfig{Subscriptions: 600, Events: 1}, 1)
	nested, base := coveredShare(w.Filters), coveredShare(stock.Filters)
	t.Logf("covered by another filter: nested %.2f, stock %.2f", nested, base)
	if nested < 0.5 || nested < 2*base {
		t.Errorf("nested workload not covering-heavy: %.2f of filters covered (stock %.2f)", nested, base)
	}
	matched := 0
	for _, e := range w.Events {
		for _, f := range w.Filters {
			if f.Matches(e) {
				matched++
			}
		}
	}
	if rate := float64(matched) / float64(len(w.Events)*len(w.Filters)); rate < 0.005 || rate > 0.2 {
		t.Errorf("match rate %.4f outside [0.005, 0.2]", rate)
	}
}

func TestNestedInvalidConfigs(t *testing.T) {
	for _, c := range []NestedConfig{
		{Subscriptions: -1},
		{Events: -2},
		{Symbols: 20_000},
		{Symbols: -1},
		{BroadSymbolPercent: 60, BroadPricePercent: 50},
	} {
		if _, err := Nested(c, 1); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	w, err := Nested(NestedConfig{Subscriptions: 50, Events: 1, BroadSymbolPercent: -1, BroadPricePercent: -1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range w.Filters {
		if f.Len() != 3 {
			t.Fatalf("broad filter %s with both broad shares off", f)
		}
	}
}
