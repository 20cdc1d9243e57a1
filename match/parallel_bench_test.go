package match_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkParallelHEM matches one event stream on one Fast index and on
// a Parallel one of as many shards as cores, both loaded with the same
// HEM subscriptions, alternating blocks of 100 events between them so
// that both see the same machine load. It reports each one's wall and CPU
// time per event and the wall-time speed-up.
//
//	go test -run '^$' -bench ParallelHEM -benchtime 2000x ./match/
func BenchmarkParallelHEM(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			w := hemWorkload(b, n)
			ids := make([]match.ID, n)
			for i := range ids {
				ids[i] = match.ID(i)
			}
			seq := match.NewFast(match.FastConfig{})
			par := match.NewParallel(0, match.FastConfig{})
			if err := seq.Load(ids, w.Filters); err != nil {
				b.Fatal(err)
			}
			if err := par.Load(ids, w.Filters); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			var dst []match.ID
			var wall, cpu [2]time.Duration
			idx := []match.Index{seq, par}
			const block = 100
			b.ResetTimer()
			for i := 0; i < b.N; i += block {
				for k, x := range idx {
					t0, c0 := time.Now(), cpuclock.Process()
					for j := i; j < i+block && j < b.N; j++ {
						dst = x.Match(w.Events[j%len(w.Events)], dst[:0])
					}
					wall[k] += time.Since(t0)
					cpu[k] += cpuclock.Process() - c0
				}
			}
			b.StopTimer()
			per := func(d time.Duration) float64 { return float64(d) / float64(b.N) }
			b.ReportMetric(per(wall[0]), "seq-ns/event")
			b.ReportMetric(per(wall[1]), "par-ns/event")
			b.ReportMetric(per(cpu[0]), "seq-cpu-ns/event")
			b.ReportMetric(per(cpu[1]), "par-cpu-ns/event")
			b.ReportMetric(float64(wall[0])/float64(wall[1]), "speedup")
			b.ReportMetric(float64(par.Shards()), "shards")
		})
	}
}
