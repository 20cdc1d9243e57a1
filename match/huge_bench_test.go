package match_test

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/internal/loadgc"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkHugeHEM loads 10^7 HEM-shaped subscriptions through the
// streaming loader, generated 10^5 at a time (each chunk from its own
// seed, dropped once handed over), into Fast and into Parallel (one shard
// per core), and matches HEM events. It reports the index's live heap,
// the process's peak resident memory so far (VmHWM) and the time per
// event. Fast's layout is its default for a load of 10^7 (the loader is
// told the count) unless the -huge flags say otherwise. It needs ~2.5 GB
// and several minutes; it is not in the 'Fast' pattern of the other
// benchmarks.
//
//	go test -run '^$' -bench HugeHEM -benchtime 200x -timeout 30m ./match/
func BenchmarkHugeHEM(b *testing.B) {
	const subs, chunk = 10_000_000, 100_000
	for _, kind := range []string{"fast", "parallel"} {
		b.Run(fmt.Sprintf("%s/subs=%d", kind, subs), func(b *testing.B) {
			idx, heap, load := hugeIndex(b, kind, subs, chunk)
			events := hemWorkload(b, 1000).Events
			runtime.GC()
			var dst []match.ID
			matches := 0
			b.ResetTimer()
			cpu := cpuclock.Process()
			for i := 0; i < b.N; i++ {
				dst = idx.Match(events[i%len(events)], dst[:0])
				matches += len(dst)
			}
			reportCPU(b, cpu)
			b.StopTimer()
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
			b.ReportMetric(float64(peakRSS(b))/(1<<10), "peak-rss-MB")
			b.ReportMetric(load.Seconds(), "load-s")
			b.ReportMetric(float64(matches)/float64(b.N), "matches/event")
		})
	}
}

// hugeCells (-huge.cells) and hugeSegment (-huge.segment) override the
// cells per dimension and the subscriptions per segment; zero, the
// default, leaves them to Fast, which at 10^7 picks 24 cells and
// segments of 2^20 (FastConfig.Resolve): 24 bitsets of 10^7 bits per
// dimension (600 MB for the 20 attributes) beside 1 GB of bounds (20 per
// subscription, 5 bytes each: a 2-byte key offset and a 3-byte slot).
var (
	hugeCells   = flag.Int("huge.cells", 0, "BenchmarkHugeHEM: cells per dimension (0: Fast's default)")
	hugeSegment = flag.Int("huge.segment", 0, "BenchmarkHugeHEM: subscriptions per segment (0: Fast's default)")
)

// hugeWide (-huge.wide) keeps bound slots in 4 bytes
// (FastConfig.WideSlots), which Fast narrows to 3 at 10^7 by default.
var hugeWide = flag.Bool("huge.wide", false, "BenchmarkHugeHEM: 4-byte bound slots")

// hugeTrace (-huge.trace) logs the resident memory (now and peak) and the
// heap every tenth of the load and after Finish, to show where the load's
// peak lies.
var hugeTrace = flag.Bool("huge.trace", false, "BenchmarkHugeHEM: log memory during the load")

// traceMemory logs the process's resident memory and heap (see hugeTrace).
func traceMemory(b *testing.B, what string) {
	if !*hugeTrace {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.Logf("%s: rss %d MB, peak rss %d MB, heap in use %d MB, next GC %d MB", what,
		procStatus(b, "VmRSS:")>>10, procStatus(b, "VmHWM:")>>10, ms.HeapInuse>>20, ms.NextGC>>20)
}

// huge caches the last index hugeIndex built, as the benchmark function
// runs more than once per sub-benchmark.
var huge struct {
	kind string
	idx  match.Index
	heap uint64
	load time.Duration
}

func hugeIndex(b *testing.B, kind string, subs, chunk int) (match.Index, uint64, time.Duration) {
	if huge.kind == kind {
		return huge.idx, huge.heap, huge.load
	}
	huge.idx = nil
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	cfg := match.FastConfig{MaxCells: *hugeCells, SegmentSlots: *hugeSegment, WideSlots: *hugeWide}
	var idx match.Index = match.NewFast(cfg)
	if kind == "parallel" {
		idx = match.NewParallel(0, cfg)
	}
	start := time.Now()
	pacer := loadgc.Start()
	defer pacer.Stop()
	l := match.NewSizedLoader(idx, subs)
	for c := 0; c < subs/chunk; c++ {
		w, err := workload.HEM(workload.HEMConfig{Subscriptions: chunk, Events: 1}, uint64(100+c))
		if err != nil {
			b.Fatal(err)
		}
		for i, f := range w.Filters {
			pacer.Step()
			if err := l.Add(match.ID(c*chunk+i), f); err != nil {
				b.Fatal(err)
			}
		}
		if (c+1)%(subs/chunk/10) == 0 {
			traceMemory(b, fmt.Sprintf("%d added", (c+1)*chunk))
		}
	}
	if err := l.Finish(); err != nil {
		b.Fatal(err)
	}
	load := time.Since(start)
	traceMemory(b, "finished")
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	huge.kind, huge.idx, huge.heap, huge.load = kind, idx, after.HeapAlloc-before.HeapAlloc, load
	return idx, huge.heap, load
}

// peakRSS returns the process's peak resident set size in KB (VmHWM).
func peakRSS(b *testing.B) int64 { return procStatus(b, "VmHWM:") }

// procStatus returns a field of /proc/self/status in KB.
func procStatus(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
