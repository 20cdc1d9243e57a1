package poset_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// Benchmarks. Workloads come from bench/workload with a fixed seed:
// "nested" (workload.Nested: covering-heavy, a few broad filters over many
// nested per-symbol price bands), "stock" (workload.Stock defaults: 2,000
// symbols, little covering) and "hem" (the REIN/TAMA/HEM synthetic
// workload: 20 attributes, 10 range predicates of width 0.3, almost no
// covering).
//
//	go test -bench . -run '^$' -count 5 ./poset/

const benchSeed = 42

// spare is how many extra filters each workload has, inserted and deleted
// in turn by the insert/delete benchmarks.
const spare = 2000

type wl struct {
	name string
	gen  func(n int) workload.Workload
}

var workloads = []wl{
	{"nested", func(n int) workload.Workload {
		w, err := workload.Nested(workload.NestedConfig{Subscriptions: n + spare, Events: 200}, benchSeed)
		if err != nil {
			panic(err)
		}
		return w
	}},
	{"stock", func(n int) workload.Workload {
		w, err := workload.Stock(workload.StockConfig{Subscriptions: n + spare, Events: 200}, benchSeed)
		if err != nil {
			panic(err)
		}
		return w
	}},
	{"hem", func(n int) workload.Workload {
		w, err := workload.HEM(workload.HEMConfig{Subscriptions: n + spare, Events: 200}, benchSeed)
		if err != nil {
			panic(err)
		}
		return w
	}},
}

// structure is the API the benchmarks need of Poset and Forest.
type structure interface {
	match.Index
	Counters() poset.Counters
	ResetCounters()
	Nodes() int
	StartRTO(match.ID, poset.Iface, match.Filter, poset.RTOConfig) (*poset.Placement, error)
	Pin([]match.Filter) error
	Fixed() []match.Filter
	AddFF(match.ID, poset.Iface, match.Filter, []poset.Bits, poset.Policy) (poset.FFStats, error)
}

func newStructure(kind string, classic bool) structure {
	switch kind {
	case "poset":
		return poset.NewPoset(poset.Config{Classic: classic})
	case "shallow":
		return poset.NewShallow(poset.Config{Classic: classic})
	}
	return poset.NewForest(poset.Config{Classic: classic})
}

// built caches structures across benchmark invocations (building 10^5
// filters is slow); the benchmarks leave them as they found them.
var built = struct {
	sync.Mutex
	m map[string]*builtStructure
}{m: map[string]*builtStructure{}}

type builtStructure struct {
	s        structure
	w        workload.Workload
	n        int
	buildDur time.Duration
	bytes    uint64
}

func build(b *testing.B, kind string, classic bool, w wl, n int) *builtStructure {
	key := fmt.Sprintf("%s/%v/%s/%d", kind, classic, w.name, n)
	built.Lock()
	defer built.Unlock()
	if bs := built.m[key]; bs != nil {
		return bs
	}
	work := w.gen(n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := newStructure(kind, classic)
	start := cpuclock.Thread()
	for i := range n {
		if err := s.Insert(match.ID(i), work.Filters[i]); err != nil {
			b.Fatal(err)
		}
	}
	dur := cpuclock.Thread() - start
	runtime.GC()
	runtime.ReadMemStats(&after)
	bs := &builtStructure{s: s, w: work, n: n, buildDur: dur, bytes: after.HeapAlloc - before.HeapAlloc}
	built.m[key] = bs
	return bs
}

type benchCase struct {
	kind    string
	classic bool
	w       wl
	n       int
}

func (c benchCase) name() string {
	mode := "indexed"
	if c.classic {
		mode = "classic"
	}
	return fmt.Sprintf("%s/%s/%s/n=%d", c.w.name, c.kind, mode, c.n)
}

// cases lists the structure configurations worth measuring: the classic
// algorithms where they finish in reasonable time, the index everywhere.
func cases() []benchCase {
	var out []benchCase
	for _, n := range []int{1000, 10000, 100000} {
		for _, w := range workloads {
			for _, kind := range []string{"forest", "poset"} {
				for _, classic := range []bool{true, false} {
					if classic && (n == 100000 || w.name == "hem" && n == 10000) {
						continue // up to 10^10 covering tests
					}
					out = append(out, benchCase{kind, classic, w, n})
				}
			}
		}
	}
	return out
}

// BenchmarkInsertDelete inserts a spare filter into a structure of n and
// deletes it again. Reported: ns per insert and per delete, covering tests
// per insert and per delete, bytes of heap per filter, and the build time
// per filter of the initial structure.
func BenchmarkInsertDelete(b *testing.B) {
	for _, c := range cases() {
		b.Run(c.name(), func(b *testing.B) {
			b.Cleanup(cpuclock.LockThread())
			bs := build(b, c.kind, c.classic, c.w, c.n)
			s := bs.s
			s.ResetCounters()
			var ins, del time.Duration
			b.ResetTimer()
			for i := range b.N {
				id := match.ID(bs.n + i%spare)
				f := bs.w.Filters[id]
				t0 := cpuclock.Thread()
				if err := s.Insert(id, f); err != nil {
					b.Fatal(err)
				}
				t1 := cpuclock.Thread()
				if err := s.Delete(id); err != nil {
					b.Fatal(err)
				}
				ins += t1 - t0
				del += cpuclock.Thread() - t1
			}
			k := s.Counters()
			b.ReportMetric(float64(ins.Nanoseconds())/float64(b.N), "ns/insert")
			b.ReportMetric(float64(del.Nanoseconds())/float64(b.N), "ns/delete")
			b.ReportMetric(float64(k.InsertTests)/float64(k.Inserts), "tests/insert")
			b.ReportMetric(float64(k.DeleteTests)/float64(k.Deletes), "tests/delete")
			b.ReportMetric(float64(bs.bytes)/float64(bs.n), "heapB/filter")
			b.ReportMetric(float64(bs.buildDur.Nanoseconds())/float64(bs.n), "build-ns/filter")
			b.ReportMetric(float64(s.Nodes()), "nodes")
		})
	}
}

// BenchmarkMatch matches the workload's events against a structure of n:
// thread CPU ns per event, and filters evaluated per event.
func BenchmarkMatch(b *testing.B) {
	for _, c := range cases() {
		if c.classic {
			continue // matching does not depend on the index
		}
		b.Run(c.name(), func(b *testing.B) {
			b.Cleanup(cpuclock.LockThread())
			bs := build(b, c.kind, c.classic, c.w, c.n)
			s := bs.s
			s.ResetCounters()
			var dst []match.ID
			b.ResetTimer()
			t0 := cpuclock.Thread()
			for i := range b.N {
				dst = s.Match(bs.w.Events[i%len(bs.w.Events)], dst[:0])
			}
			cpu := cpuclock.Thread() - t0
			k := s.Counters()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/match")
			b.ReportMetric(float64(k.MatchEvals)/float64(k.Matches), "evals/match")
		})
	}
}
