package workload

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// files renders a workload in the match file formats, the bytes anyone
// running it elsewhere would see.
func files(t *testing.T, w Workload) (subs, events []byte) {
	t.Helper()
	var s, e bytes.Buffer
	if err := match.WriteSubscriptions(&s, w.Filters); err != nil {
		t.Fatal(err)
	}
	if err := match.WriteEvents(&e, w.Events); err != nil {
		t.Fatal(err)
	}
	return s.Bytes(), e.Bytes()
}

func generators() map[string]func(seed uint64) (Workload, error) {
	return map[string]func(seed uint64) (Workload, error){
		"hem": func(seed uint64) (Workload, error) {
			return HEM(HEMConfig{Subscriptions: 500, Events: 50}, seed)
		},
		"hem-skewed": func(seed uint64) (Workload, error) {
			return HEM(HEMConfig{Subscriptions: 500, Events: 50, EventAttributes: 12, AttrSkew: 1.5, ValueSkew: 0.8, Domain: 10_000}, seed)
		},
		"stock": func(seed uint64) (Workload, error) {
			return Stock(StockConfig{Subscriptions: 500, Events: 50}, seed)
		},
	}
}

func TestDeterministicForSeed(t *testing.T) {
	for name, gen := range generators() {
		t.Run(name, func(t *testing.T) {
			a, err := gen(7)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := gen(7)
			other, _ := gen(8)
			as, ae := files(t, a)
			bs, be := files(t, b)
			xs, xe := files(t, other)
			if !bytes.Equal(as, bs) || !bytes.Equal(ae, be) {
				t.Fatalf("seed 7 gave different files on two runs")
			}
			if bytes.Equal(as, xs) || bytes.Equal(ae, xe) {
				t.Fatalf("seeds 7 and 8 gave the same files")
			}
		})
	}
}

func TestSubscriptionsNestAndIgnoreEventCount(t *testing.T) {
	small, _ := HEM(HEMConfig{Subscriptions: 100, Events: 5}, 3)
	big, _ := HEM(HEMConfig{Subscriptions: 300, Events: 50}, 3)
	for i, f := range small.Filters {
		if !f.Equal(big.Filters[i]) {
			t.Fatalf("subscription %d differs: %s vs %s", i, f, big.Filters[i])
		}
	}
	for i, e := range small.Events {
		if !e.Equal(big.Events[i]) {
			t.Fatalf("event %d differs", i)
		}
	}
}

func TestHEMShape(t *testing.T) {
	cfg := HEMConfig{Subscriptions: 200, Events: 20, Attributes: 8, Predicates: 3, Width: 0.25, Domain: 1000, EventAttributes: 5}
	w, err := HEM(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range w.Filters {
		if len(f.Attrs()) != 3 || f.Len() != 6 {
			t.Fatalf("want 3 attributes with 2 bounds each, got %s", f)
		}
		for i := 0; i < f.Len(); i += 2 {
			lo, hi := f.At(i+1), f.At(i) // canonical order puts <= before >=
			if lo.Op != match.OpGe || hi.Op != match.OpLe {
				t.Fatalf("unexpected operators in %s", f)
			}
			if span := hi.Val.AsInt() - lo.Val.AsInt(); span != 250 || lo.Val.AsInt() < 0 || hi.Val.AsInt() >= 1000 {
				t.Fatalf("range [%d, %d] has span %d, want 250 inside [0, 1000)", lo.Val.AsInt(), hi.Val.AsInt(), span)
			}
		}
	}
	for _, e := range w.Events {
		if e.Len() != 5 {
			t.Fatalf("event has %d attributes, want 5: %s", e.Len(), e)
		}
	}
}

// TestHEMEqualityShare checks the equality knob: about the asked share of
// predicates are `a == v` with v in the domain, the rest ranges, and each
// attribute still carries one predicate.
func TestHEMEqualityShare(t *testing.T) {
	for _, share := range []float64{0, 0.3, 1} {
		w, err := HEM(HEMConfig{Subscriptions: 2000, Events: 1, Domain: 1000, EqualityShare: share}, 5)
		if err != nil {
			t.Fatal(err)
		}
		eq, preds := 0, 0
		for _, f := range w.Filters {
			for i := range f.Len() {
				c := f.At(i)
				if c.Op == match.OpEq {
					eq++
					if v := c.Val.AsInt(); v < 0 || v >= 1000 {
						t.Fatalf("equality value %d outside the domain", v)
					}
				}
			}
			preds += len(f.Attrs())
			if len(f.Attrs()) != DefaultHEMPredicates {
				t.Fatalf("%d attributes in %s", len(f.Attrs()), f)
			}
		}
		if got := float64(eq) / float64(preds); got < share-0.03 || got > share+0.03 {
			t.Errorf("share %v: %.3f of predicates are equalities", share, got)
		}
	}
}

func TestInvalidConfigs(t *testing.T) {
	bad := []HEMConfig{
		{Predicates: 30},
		{Width: 1.5},
		{Width: -0.1},
		{EventAttributes: 21},
		{AttrSkew: -1},
		{Subscriptions: -1},
		{Domain: -5},
		{EqualityShare: 1.5},
		{EqualityShare: -0.5},
	}
	for _, cfg := range bad {
		if _, err := HEM(cfg, 1); err == nil {
			t.Errorf("HEM(%+v) succeeded, want an error", cfg)
		}
	}
	for _, cfg := range []StockConfig{{Symbols: -1}, {Volatility: 2}, {SymbolSkew: -1}, {Events: -3}} {
		if _, err := Stock(cfg, 1); err == nil {
			t.Errorf("Stock(%+v) succeeded, want an error", cfg)
		}
	}
}

// TestStockMatchRate checks the promise of a realistic match rate: about
// 0.1-1% of subscriptions per event.
func TestStockMatchRate(t *testing.T) {
	w, err := Stock(StockConfig{Subscriptions: 5000, Events: 300}, 11)
	if err != nil {
		t.Fatal(err)
	}
	s := match.NewScan()
	if err := match.Load(s, ids(len(w.Filters)), w.Filters); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range w.Events {
		total += len(s.Match(e, nil))
	}
	rate := float64(total) / float64(len(w.Events)) / float64(len(w.Filters))
	if rate < 0.001 || rate > 0.015 {
		t.Fatalf("stock match rate %.4f%%, want about 0.1-1%%", 100*rate)
	}
}

func ids(n int) []match.ID {
	out := make([]match.ID, n)
	for i := range out {
		out[i] = match.ID(i)
	}
	return out
}

func TestZipfSampleDistinct(t *testing.T) {
	r := newRand(1, 1)
	for _, s := range []float64{0, 0.5, 2, 5} {
		z := newZipf(20, s)
		for range 100 {
			got := z.sample(r, 10)
			for i := 1; i < len(got); i++ {
				if got[i] <= got[i-1] {
					t.Fatalf("skew %v: sample %v not strictly increasing", s, got)
				}
			}
		}
	}
}

func BenchmarkHEM(b *testing.B) {
	for b.Loop() {
		if _, err := HEM(HEMConfig{Subscriptions: 10_000, Events: 100}, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStock(b *testing.B) {
	for b.Loop() {
		if _, err := Stock(StockConfig{}, 1); err != nil {
			b.Fatal(err)
		}
	}
}
