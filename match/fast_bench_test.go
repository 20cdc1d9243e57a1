package match_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// Benchmarks of the Fast index on the HEM default workload (20 integer
// attributes in [0, 1,000,000), 10 range predicates of width 0.3 per
// subscription, events with all 20 attributes) and the stock workload.
//
//	go test -run '^$' -bench 'Fast' -benchtime 2000x ./match/
//
// ns/op is the time per event (Match) or per subscription (Insert);
// B/sub is the live heap the index holds per subscription.

var benchSizes = []int{100_000, 1_000_000}

func hemWorkload(b *testing.B, subs int) workload.Workload {
	w, err := workload.HEM(workload.HEMConfig{Subscriptions: subs, Events: 2000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

func stockWorkload(b *testing.B, subs int) workload.Workload {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: subs, Events: 2000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

func loadFast(b *testing.B, filters []match.Filter) *match.Fast {
	return loadFastConfig(b, filters, match.FastConfig{})
}

func loadFastConfig(b *testing.B, filters []match.Filter, cfg match.FastConfig) *match.Fast {
	idx := match.NewFast(cfg)
	ids := make([]match.ID, len(filters))
	for i := range ids {
		ids[i] = match.ID(i)
	}
	if err := idx.Load(ids, filters); err != nil {
		b.Fatal(err)
	}
	return idx
}

func benchMatch(b *testing.B, w workload.Workload) {
	benchMatchConfig(b, w, match.FastConfig{})
}

func benchMatchConfig(b *testing.B, w workload.Workload, cfg match.FastConfig) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	idx := loadFastConfig(b, w.Filters, cfg)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	var dst []match.ID
	matches := 0
	b.ResetTimer()
	cpu := cpuclock.Process()
	for i := 0; i < b.N; i++ {
		dst = idx.Match(w.Events[i%len(w.Events)], dst[:0])
		matches += len(dst)
	}
	reportCPU(b, cpu)
	b.StopTimer()
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(w.Filters)), "B/sub")
	b.ReportMetric(float64(matches)/float64(b.N), "matches/event")
	runtime.KeepAlive(idx)
}

func BenchmarkFastMatchHEM(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) { benchMatch(b, hemWorkload(b, n)) })
	}
}

// BenchmarkFastMatchStock matches stock events. Besides the large sizes it
// has the two shapes of issue 7's chain benchmark (10^4 stock subscriptions
// at the far router c): subs=10000 is c's index, and roots-of-10000 the link
// tables of routers a and b, which hold only the filters no other filter
// covers (the roots of a forest of the 10^4 filters: 3,045 of them). Load
// builds one segment, the shape a router's index takes once compacted.
//
//	go test -run '^$' -bench 'FastMatchStock/(subs=10000$|roots)' -benchtime 20000x -count 5 ./match
func BenchmarkFastMatchStock(b *testing.B) {
	for _, n := range append([]int{10_000}, benchSizes...) {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) { benchMatch(b, stockWorkload(b, n)) })
	}
	b.Run("roots-of-10000", func(b *testing.B) {
		w := stockWorkload(b, 10_000)
		w.Filters = coveringRoots(b, w.Filters)
		benchMatch(b, w)
	})
}

// BenchmarkFastMatchPoints matches against subscriptions that each want
// their own value of one string attribute (k == "vI": the filters an
// upstream router holds from a link, or one topic each), so that the
// segment's pivot has a point per subscription and every event looks its
// value up among them; half the events name a value nobody wants.
//
//	go test -run '^$' -bench 'FastMatchPoints' -benchtime 2000000x ./match
func BenchmarkFastMatchPoints(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			w := workload.Workload{Filters: make([]match.Filter, n), Events: make([]match.Event, 4096)}
			for i := range w.Filters {
				w.Filters[i] = match.MustParse(fmt.Sprintf(`k == "v%d"`, i))
			}
			for i := range w.Events {
				v := fmt.Sprintf("v%d", (i*7919)%(2*n)) // beyond n: nobody's
				w.Events[i] = match.MustEvent(match.Attr{Name: "k", Value: match.Str(v)})
			}
			benchMatch(b, w)
		})
	}
}

// coveringRoots returns the filters no other filter covers (one of each
// group of equivalent ones), as a covering-pruned routing table forwards
// them to a neighbour.
func coveringRoots(b *testing.B, filters []match.Filter) []match.Filter {
	forest := poset.NewForest(poset.Config{})
	for i, f := range filters {
		if err := forest.Insert(match.ID(i), f); err != nil {
			b.Fatal(err)
		}
	}
	view := forest.View(0)
	if len(view) == 0 {
		return nil
	}
	return view[0][0]
}

// BenchmarkFastCellsHEM trades memory for time: the cells per attribute at
// 10^6 HEM subscriptions.
func BenchmarkFastCellsHEM(b *testing.B) {
	w := hemWorkload(b, 1_000_000)
	for _, cells := range []int{24, 32, 40, 48, 56, 64} {
		b.Run(fmt.Sprintf("cells=%d", cells), func(b *testing.B) {
			benchMatchConfig(b, w, match.FastConfig{MaxCells: cells})
		})
	}
	for _, cells := range []int{48, 64} { // 3-byte bound slots
		b.Run(fmt.Sprintf("narrow/cells=%d", cells), func(b *testing.B) {
			benchMatchConfig(b, w, match.FastConfig{MaxCells: cells, NarrowSlots: true})
		})
	}
}

// BenchmarkFastInsertHEM measures online inserts into an index already
// holding n subscriptions (merges and rebuilds included, amortised).
func BenchmarkFastInsertHEM(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			w := hemWorkload(b, n)
			extra := hemWorkload(b, 200_000).Filters
			idx := loadFast(b, w.Filters)
			b.ResetTimer()
			cpu := cpuclock.Process()
			for i := 0; i < b.N; i++ {
				if err := idx.Insert(match.ID(n+i), extra[i%len(extra)]); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkScanMatchHEM is the brute-force reference on the same workload.
func BenchmarkScanMatchHEM(b *testing.B) {
	w := hemWorkload(b, 100_000)
	idx := match.NewScan()
	for i, f := range w.Filters {
		idx.Insert(match.ID(i), f)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		idx.Match(w.Events[i%len(w.Events)], nil)
	}
}

// cpuTime returns the CPU time the process has used (user and system, all
// threads, GC included). On a shared machine it is steadier than wall time.

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuclock.Process()-start)/float64(b.N), "cpu-ns/op")
}
