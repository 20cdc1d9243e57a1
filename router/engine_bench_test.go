package router

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkEngineRoute measures the matching loop's per-event work without
// sockets: route over 10 interfaces with 1,000 stock subscriptions each,
// installed one by one through subscribe as clients do, with each
// registered index.
func BenchmarkEngineRoute(b *testing.B) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 10000, Events: 20000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"fast", "fast-compacted", "scan"} {
		b.Run(name, func(b *testing.B) {
			idx, err := match.NewIndex(strings.TrimSuffix(name, "-compacted"))
			if err != nil {
				b.Fatal(err)
			}
			e := newEngine(idx, 0)
			for c := range 10 {
				e.attach(ifaceID(c), kindClient)
				for i, f := range w.Filters[c*1000 : (c+1)*1000] {
					if err := e.subscribe(ifaceID(c), uint64(i), f.String()); err != nil {
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
				hits += len(e.route(99, w.Events[i%len(w.Events)]))
			}
			b.ReportMetric(float64(hits)/float64(b.N), "conns/event")
		})
	}
}
