package mesh

import (
	"fmt"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkAdvertChainSubscribe is BenchmarkChainSubscribe (poset table)
// with advertisements on: a publisher at a advertises `symbol == X` for
// the 10 most popular symbols, either before the 10,000 stock
// subscriptions are made at c ("adverts-first": each forwarding change
// pays the overlap tests) or after ("adverts-after": each advertisement
// pays a pass over the filters forwarded and not sent yet). It reports
// the thread CPU time per operation and the filters that reached a, to
// compare with BenchmarkChainSubscribe/poset (every filter covering
// allows).
func BenchmarkAdvertChainSubscribe(b *testing.B) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 10_000, Events: 1}, 1)
	if err != nil {
		b.Fatal(err)
	}
	var ads []match.Filter
	for _, sym := range []string{"AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META", "TSLA", "BRK.B", "JPM", "V"} {
		ads = append(ads, match.MustParse(fmt.Sprintf("symbol == %q", sym)))
	}
	for _, order := range []string{"adverts-first", "adverts-after"} {
		b.Run(order, func(b *testing.B) {
			b.Cleanup(cpuclock.LockThread())
			var atNear int
			var cpu time.Duration
			for b.Loop() {
				start := cpuclock.Thread()
				s := newAdvertSim(b, []string{"a", "b", "c"}, "poset")
				s.noCheck = true
				if s.connect(0, 1) != nil || s.connect(1, 2) != nil {
					b.Fatal("link refused")
				}
				s.quiesce()
				advertise := func() {
					for i, f := range ads {
						s.advertise(subKey{0, Client(100_000 + i), 1}, f)
					}
					s.quiesce()
				}
				if order == "adverts-first" {
					advertise()
				}
				for i, f := range w.Filters {
					s.subscribe(subKey{2, Client(i + 1), 1}, f)
				}
				s.quiesce()
				if order == "adverts-after" {
					advertise()
				}
				atNear = len(s.routers[0].Routes()[0].Received)
				cpu += cpuclock.Thread() - start
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(w.Filters)), "subs/op")
			b.ReportMetric(float64(atNear), "filters-at-near/op")
		})
	}
}
