package bloom_test

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/bftree"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/sbstree"
)

// The sweep is a measurement command, not a test: it runs only when asked,
// for example
//
//	go test ./match/bloom -run Sweep -v -timeout 0 -bloom.sweep=params -bloom.n=10000,100000
//
// and prints markdown tables (see notes/issue-4.md).
var (
	sweepKind   = flag.String("bloom.sweep", "", "run a sweep and print tables: params (stock, m x k), trees (stock, h and trees vs fast), hem (saturation), terms (flat vs qualified)")
	sweepN      = flag.String("bloom.n", "10000,100000", "comma-separated subscription counts")
	sweepEvents = flag.Int("bloom.events", 1000, "events per run")
	sweepGroups = flag.Int("bloom.groups", 64, "neighbours the subscriptions are spread over, round robin, for the forwarded-event false-positive rate")
)

func TestSweep(t *testing.T) {
	if *sweepKind == "" {
		t.Skip("measurement command; run with -bloom.sweep=params|trees|hem|terms")
	}
	ns := parseInts(t, *sweepN)
	switch *sweepKind {
	case "params":
		sweepParams(t, ns)
	case "trees":
		sweepTrees(t, ns)
	case "hem":
		sweepHEM(t, ns)
	case "terms":
		sweepTerms(t, ns)
	default:
		t.Fatalf("unknown sweep %q", *sweepKind)
	}
}

func parseInts(t *testing.T, s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("-bloom.n: %v", err)
		}
		out = append(out, n)
	}
	return out
}

func stock(t *testing.T, n int) workload.Workload {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: n, Events: *sweepEvents}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// result is one measured configuration.
type result struct {
	build      time.Duration
	heapMB     float64
	nodes      int
	terms      int
	perEvent   time.Duration // exact Match, summary included (wall)
	cpuEvent   time.Duration // the same in process CPU time
	perSummary time.Duration
	stats      bloom.Stats
	fwdFP      float64 // false share of (event, neighbour) forwards
	fwdFPUnsat float64 // the same when saturated events are forwarded exactly
	matches    float64 // exact matches per event
}

// cpuTime is the process's user+system CPU time: on a shared machine it
// is a steadier measure than wall time (the sweep is single-threaded
// apart from the garbage collector).

func heap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// measure loads the workload into a fresh index and matches its events.
func measure(t *testing.T, w workload.Workload, idx *bloom.Index) result {
	ids := make([]match.ID, len(w.Filters))
	for i := range ids {
		ids[i] = match.ID(i)
	}
	h0 := heap()
	start := time.Now()
	if err := match.Load(idx, ids, w.Filters); err != nil {
		t.Fatal(err)
	}
	sum := idx.Dictionary().Params().NewFilter()
	idx.Dictionary().Summary(w.Events[0], sum) // builds the summary indexes
	r := result{build: time.Since(start)}
	r.heapMB = float64(heap()-h0) / (1 << 20)
	r.nodes, r.terms = idx.Tree().Nodes(), idx.Dictionary().Len()

	start = time.Now()
	for _, e := range w.Events {
		idx.Dictionary().Summary(e, sum)
	}
	r.perSummary = time.Since(start) / time.Duration(len(w.Events))

	var dst []match.ID
	start, cpu0 := time.Now(), cpuclock.Process()
	for _, e := range w.Events {
		dst = idx.Match(e, dst[:0])
	}
	r.perEvent = time.Since(start) / time.Duration(len(w.Events))
	r.cpuEvent = (cpuclock.Process() - cpu0) / time.Duration(len(w.Events))
	r.stats = idx.Counters()
	r.matches = float64(r.stats.Exact) / float64(r.stats.Events)
	r.fwdFP, r.fwdFPUnsat = forwardedFP(w, idx)
	return r
}

// forwardedFP spreads the subscriptions over -bloom.groups neighbours and
// returns the share of (event, neighbour) forwards (some candidate in the
// neighbour's group) with no exact match in that group; and the same share
// when events with a saturated summary are forwarded exactly (the exact
// fallback of docs/protocol.md, "Bloom forwarding").
func forwardedFP(w workload.Workload, idx *bloom.Index) (all, unsat float64) {
	g := *sweepGroups
	var forwarded, falseFwd, fwdUnsat, falseUnsat int
	cand, exact := make([]bool, g), make([]bool, g)
	var dst []match.ID
	for _, e := range w.Events {
		clear(cand)
		clear(exact)
		dst = idx.MatchRaw(e, dst[:0])
		for _, id := range dst {
			cand[int(id)%g] = true
			if w.Filters[id].Matches(e) {
				exact[int(id)%g] = true
			}
		}
		sat := idx.LastSaturated()
		for i := range g {
			if cand[i] {
				forwarded++
				if !exact[i] {
					falseFwd++
				}
			}
			// With the fallback a saturated event goes exactly where it
			// matches.
			if sat && exact[i] || !sat && cand[i] {
				fwdUnsat++
				if !sat && !exact[i] {
					falseUnsat++
				}
			}
		}
	}
	return ratioInt(falseFwd, forwarded), ratioInt(falseUnsat, fwdUnsat)
}

func ratioInt(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func pct(x float64) string { return fmt.Sprintf("%.2f", 100*x) }

func us(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Nanoseconds())/1e3) }

func rowHeader() {
	fmt.Println("| n | index | m | k | build s | heap MB | nodes | terms | µs/event | CPU µs/event | summary µs | matches/event | candidates/event | FP % of candidates | FP % of forwards | FP % cand. w/ fallback | FP % fwd w/ fallback | mean fill % | saturated % |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
}

func row(n int, name string, p bloom.Params, r result) {
	p = p.Resolved()
	s := r.stats
	fmt.Printf("| %d | %s | %d | %d | %.2f | %.1f | %d | %d | %s | %s | %s | %.1f | %.1f | %s | %s | %s | %s | %s | %s |\n",
		n, name, p.M, p.K, r.build.Seconds(), r.heapMB, r.nodes, r.terms, us(r.perEvent), us(r.cpuEvent), us(r.perSummary),
		r.matches, float64(s.Candidates)/float64(s.Events), pct(s.FPRate()), pct(r.fwdFP),
		pct(s.UnsaturatedFPRate()), pct(r.fwdFPUnsat),
		pct(s.MeanFill()), pct(float64(s.Saturated)/float64(s.Events)))
}

func sbs(t *testing.T, p bloom.Params) *bloom.Index {
	idx, err := sbstree.NewIndex(p)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// sweepParams: false positives and fill over m and k on stock (sbstree;
// the rates do not depend on the tree).
func sweepParams(t *testing.T, ns []int) {
	rowHeader()
	for _, n := range ns {
		w := stock(t, n)
		for _, m := range []uint{128, 256, 512, 1024} {
			for _, k := range []uint{1, 2, 3, 4, 6, 8} {
				p := bloom.Params{M: m, K: k}
				row(n, "sbstree", p, measure(t, w, sbs(t, p)))
			}
		}
	}
}

// sweepTrees: time and memory of bftree (over h) and sbstree at the
// default parameters, against the exact fast index.
func sweepTrees(t *testing.T, ns []int) {
	rowHeader()
	p := bloom.Params{}.Resolved()
	for _, n := range ns {
		w := stock(t, n)
		fastRow(t, n, w)
		for _, h := range []int{4, 8, 16, 32} {
			idx, err := bftree.NewIndex(bftree.Config{Bloom: p, H: h})
			if err != nil {
				t.Fatal(err)
			}
			row(n, fmt.Sprintf("bftree h=%d", h), p, measure(t, w, idx))
		}
		row(n, "sbstree", p, measure(t, w, sbs(t, p)))
	}
}

func fastRow(t *testing.T, n int, w workload.Workload) {
	ids := make([]match.ID, len(w.Filters))
	for i := range ids {
		ids[i] = match.ID(i)
	}
	h0 := heap()
	start := time.Now()
	idx, err := match.NewIndex("fast")
	if err != nil {
		t.Fatal(err)
	}
	if err := match.Load(idx, ids, w.Filters); err != nil {
		t.Fatal(err)
	}
	build := time.Since(start)
	mb := float64(heap()-h0) / (1 << 20)
	var dst []match.ID
	matches := 0
	start, cpu0 := time.Now(), cpuclock.Process()
	for _, e := range w.Events {
		dst = idx.Match(e, dst[:0])
		matches += len(dst)
	}
	per := time.Since(start) / time.Duration(len(w.Events))
	cpu := (cpuclock.Process() - cpu0) / time.Duration(len(w.Events))
	fmt.Printf("| %d | fast (exact) | - | - | %.2f | %.1f | - | - | %s | %s | - | %.1f | - | - | - | - | - | - | - |\n",
		n, build.Seconds(), mb, us(per), us(cpu), float64(matches)/float64(len(w.Events)))
}

// sweepHEM: where the summary saturates on the range-heavy HEM workload.
func sweepHEM(t *testing.T, ns []int) {
	rowHeader()
	for _, n := range ns {
		w, err := workload.HEM(workload.HEMConfig{Subscriptions: n, Events: *sweepEvents}, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []uint{128, 256, 512, 1024, 4096, 16384, 65536} {
			for _, k := range []uint{1, 3} {
				p := bloom.Params{M: m, K: k}
				row(n, "sbstree", p, measure(t, w, sbs(t, p)))
			}
		}
	}
}

// sweepTerms: flat constraint keys against qualified terms on stock.
func sweepTerms(t *testing.T, ns []int) {
	rowHeader()
	for _, n := range ns {
		w := stock(t, n)
		for _, flat := range []bool{true, false} {
			for _, m := range []uint{256, 1024} {
				p := bloom.Params{M: m, Flat: flat}
				name := "sbstree qualified"
				if flat {
					name = "sbstree flat"
				}
				row(n, name, p, measure(t, w, sbs(t, p)))
			}
		}
	}
}
