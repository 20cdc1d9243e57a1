package core

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkEngineRoute measures the matching loop's per-event work without
// sockets: route over 10 interfaces with 1,000 stock subscriptions each,
// installed one by one through subscribe as clients do, with each
// registered index (fast-parallel holds them in one shard, below its
// split size).
func BenchmarkEngineRoute(b *testing.B) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 10000, Events: 20000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"fast", "fast-compacted", "fast-parallel", "scan"} {
		b.Run(name, func(b *testing.B) {
			idx, err := match.NewIndex(strings.TrimSuffix(name, "-compacted"))
			if err != nil {
				b.Fatal(err)
			}
			e := NewEngine(idx, 0)
			for c := range 10 {
				e.Attach(ifaceID(c), KindClient)
				for i, f := range w.Filters[c*1000 : (c+1)*1000] {
					if err := e.Subscribe(ifaceID(c), uint64(i), f.String()); err != nil {
						b.Fatal(err)
					}
				}
			}
			if c, ok := idx.(match.Compacter); ok && strings.HasSuffix(name, "-compacted") {
				c.Compact()
			}
			hits := 0
			b.ResetTimer()
			for i := range b.N {
				hits += len(e.Route(99, w.Events[i%len(w.Events)]))
			}
			b.ReportMetric(float64(hits)/float64(b.N), "conns/event")
		})
	}
}

// fixedIndex is a match.Index whose Match returns the same ids for every
// event, so that a benchmark measures route's own work alone.
type fixedIndex struct {
	match.Index
	ids []match.ID
}

func (x fixedIndex) Match(_ match.Event, dst []match.ID) []match.ID { return append(dst, x.ids...) }

// BenchmarkEngineRouteOverhead measures route's work beyond matching: the
// issue 6 shape's ~84 matches per event spread over 10 client interfaces
// (an index returning fixed ids), grouped per interface and sorted.
func BenchmarkEngineRouteOverhead(b *testing.B) {
	e := NewEngine(match.NewScan(), 0)
	var ids []match.ID
	for c := range 10 {
		e.Attach(ifaceID(c), KindClient)
		for i := range 1000 {
			if err := e.Subscribe(ifaceID(c), uint64(i), `x == 1`); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range 84 { // spread over the interfaces, out of order
		ids = append(ids, match.ID(1+(i*7919)%10000))
	}
	e.idx = fixedIndex{Index: e.idx, ids: ids}
	ev := match.MustEvent(match.Attr{Name: "x", Value: match.Int(1)})
	b.ResetTimer()
	for range b.N {
		e.Route(99, ev)
	}
}
