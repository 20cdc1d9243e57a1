package mesh

import (
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
)

// BenchmarkChainSubscribe installs stock subscriptions at the far end of a
// chain a-b-c (one client each) and delivers every message until quiet:
// the CPU cost of propagation with covering and acknowledgements (the
// simulation's codec round trips included). It reports the thread CPU
// time per operation (cpu-ns/op, see cpuclock_test.go) and the filters
// that reached a (the near router).
func BenchmarkChainSubscribe(b *testing.B) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 10_000, Events: 1}, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, table := range []string{"poset", "forest"} {
		b.Run(table, func(b *testing.B) {
			b.Cleanup(cpuclock.LockThread())
			var atNear int
			var cpu time.Duration
			for b.Loop() {
				start := cpuclock.Thread()
				s := newSim(b, []string{"a", "b", "c"}, table)
				s.noCheck = true
				if s.connect(0, 1) != nil || s.connect(1, 2) != nil {
					b.Fatal("link refused")
				}
				s.quiesce()
				for i, f := range w.Filters {
					s.subscribe(subKey{2, Client(i + 1), 1}, f)
				}
				s.quiesce()
				atNear = len(s.routers[0].Routes()[0].Received)
				cpu += cpuclock.Thread() - start
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(w.Filters)), "subs/op")
			b.ReportMetric(float64(atNear), "filters-at-near/op")
		})
	}
}
