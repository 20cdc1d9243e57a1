package match_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkFastBlocksHEM measures what smaller segments would buy: the
// 10^6 HEM subscriptions split into k Fast indexes of 10^6/k each, every
// event matched against all k in turn. The bitsets take the same memory
// (cells x dimensions x subscriptions bits), but a smaller segment's fail
// words (125 KB at 10^6, 16 KB at 1/8 of it) stay in a nearer cache while
// its bounds are marked.
//
//	go test -run '^$' -bench FastBlocksHEM -benchtime 3000x ./match/
func BenchmarkFastBlocksHEM(b *testing.B) {
	w := hemWorkload(b, 1_000_000)
	for _, k := range []int{1, 8, 32} { // each block one segment
		b.Run(fmt.Sprintf("blocks=%d", k), func(b *testing.B) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			idxs := make([]*match.Fast, k)
			per := len(w.Filters) / k
			for i := range idxs {
				idxs[i] = match.NewFast(match.FastConfig{MaxCells: 32, SegmentSlots: 1 << 30})
				ids := make([]match.ID, per)
				for j := range ids {
					ids[j] = match.ID(i*per + j)
				}
				if err := idxs[i].Load(ids, w.Filters[i*per:(i+1)*per]); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			var dst []match.ID
			matches := 0
			b.ResetTimer()
			cpu := cpuclock.Process()
			for i := 0; i < b.N; i++ {
				dst = dst[:0]
				for _, x := range idxs {
					dst = x.Match(w.Events[i%len(w.Events)], dst)
				}
				matches += len(dst)
			}
			reportCPU(b, cpu)
			b.StopTimer()
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(w.Filters)), "B/sub")
			b.ReportMetric(float64(matches)/float64(b.N), "matches/event")
			runtime.KeepAlive(idxs)
		})
	}
}
