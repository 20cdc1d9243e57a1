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
// HEM subscriptions, alternating blocks of 100 events between Fast,
// Parallel one event at a time (Match) and Parallel a block at a time
// (MatchBatch), so that all three see the same machine load. It reports
// each one's wall and CPU time per event and the wall-time speed-ups
// over Fast; and, since on a shared machine wall time mostly measures the
// wait for a CPU, the critical path: Fast's thread CPU time over the
// largest thread CPU time of one shard matching each block alone.
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
			var dsts [][]match.ID
			// seq: Fast, one Match per event; par: Parallel, one Match per
			// event; batch: Parallel, one MatchBatch per block.
			var wall, cpu [3]time.Duration
			// seqThread is Fast's thread CPU time, critical the sum over
			// blocks of the largest thread CPU time of one shard matching
			// the block alone: the time two idle cores would take, memory
			// contention and the handoff aside.
			var seqThread, critical time.Duration
			defer cpuclock.LockThread()()
			const block = 100
			b.ResetTimer()
			for i := 0; i < b.N; i += block {
				evs := make([]match.Event, 0, block)
				for j := i; j < i+block && j < b.N; j++ {
					evs = append(evs, w.Events[j%len(w.Events)])
				}
				for k := range wall {
					t0, c0 := time.Now(), cpuclock.Process()
					switch k {
					case 0:
						t := cpuclock.Thread()
						for _, e := range evs {
							dst = seq.Match(e, dst[:0])
						}
						seqThread += cpuclock.Thread() - t
					case 1:
						for _, e := range evs {
							dst = par.Match(e, dst[:0])
						}
					case 2:
						for j := range dsts {
							dsts[j] = dsts[j][:0]
						}
						dsts = par.MatchBatch(evs, dsts)
					}
					wall[k] += time.Since(t0)
					cpu[k] += cpuclock.Process() - c0
				}
				var most time.Duration
				for _, sh := range par.ShardIndexes() {
					t := cpuclock.Thread()
					for _, e := range evs {
						dst = sh.Match(e, dst[:0])
					}
					most = max(most, cpuclock.Thread()-t)
				}
				critical += most
			}
			b.StopTimer()
			per := func(d time.Duration) float64 { return float64(d) / float64(b.N) }
			for k, name := range []string{"seq", "par", "batch"} {
				b.ReportMetric(per(wall[k]), name+"-ns/event")
				b.ReportMetric(per(cpu[k]), name+"-cpu-ns/event")
			}
			b.ReportMetric(float64(wall[0])/float64(wall[1]), "par-speedup")
			b.ReportMetric(float64(wall[0])/float64(wall[2]), "batch-speedup")
			b.ReportMetric(per(seqThread), "seq-thread-ns/event")
			b.ReportMetric(per(critical), "shard-max-thread-ns/event")
			b.ReportMetric(float64(seqThread)/float64(critical), "critical-path-speedup")
			b.ReportMetric(float64(par.Shards()), "shards")
		})
	}
}
