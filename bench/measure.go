package bench

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
)

// Options tune how each structure is measured. A zero field takes the
// default written beside it.
type Options struct {
	// Runs is the number of timed passes over all events (default 3).
	Runs int
	// Warmup is the number of events matched before timing (default 100,
	// at most the number of events).
	Warmup int
	// Check is the number of sampled events every structure is checked
	// against scan on (default 100; -1 checks every event).
	Check int
	// Budget bounds the time spent on one structure at one point
	// (default 2 minutes). A structure predicted or found to exceed it is
	// skipped at that point and marked so.
	Budget time.Duration
	// Progress, if set, is called as each structure starts and finishes
	// at each point.
	Progress func(ProgressEvent)
}

// ProgressEvent reports a structure starting (Running) or finished at one
// point; Done counts the finished (structure, point) pairs of Total.
type ProgressEvent struct {
	Done, Total int
	Running     bool
	Structure   string
	Point       []Param
}

func (o Options) withDefaults() Options {
	if o.Runs == 0 {
		o.Runs = 3
	}
	if o.Warmup == 0 {
		o.Warmup = 100
	}
	if o.Check == 0 {
		o.Check = 100
	}
	if o.Budget == 0 {
		o.Budget = 2 * time.Minute
	}
	return o
}

// errBudget marks a build or pass abandoned because it exceeded the budget.
var errBudget = errors.New("over the time budget")

// point is one workload instance all structures run on.
type point struct {
	params  []Param // the swept knobs
	filters []match.Filter
	events  []match.Event
	ref     Reference
}

// measure runs one structure at one point. It returns a *MismatchError
// when the structure disagrees with scan; every other problem is recorded
// in the result.
func measure(s Structure, p *point, o Options) (Result, error) {
	r := Result{Structure: s.Name, Point: p.params, Subs: len(p.filters), Events: len(p.events)}
	deadline := time.Now().Add(o.Budget)
	idx, err := build(s, p, &r, deadline)
	if err != nil {
		r.Status, r.Reason = StatusError, err.Error()
		if errors.Is(err, errBudget) {
			r.Status = StatusSkipped
		}
		return r, nil
	}
	defer runtime.KeepAlive(idx)
	if r.Checked, err = p.ref.Check(s.Name, idx, p.events); err != nil {
		return r, err
	}
	counts, err := timeMatches(idx, p.events, o, &r, deadline)
	if err != nil {
		r.Status, r.Reason = StatusSkipped, err.Error()
		return r, nil
	}
	bloomMeasures(idx, p.events, counts, &r, deadline)
	if sr, ok := idx.(match.StatsReporter); ok {
		r.Stats = sr.Stats()
	}
	r.Status = StatusOK
	return r, nil
}

// build loads the structure and records build time, insert rate and heap.
// Structures without bulk loading are built insert by insert so a build
// over the budget can be abandoned.
func build(s Structure, p *point, r *Result, deadline time.Time) (match.Index, error) {
	before := liveHeap()
	start := time.Now()
	idx := s.New()
	ids := sequentialIDs(len(p.filters))
	if _, bulk := idx.(match.BulkLoader); bulk {
		if err := match.Load(idx, ids, p.filters); err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
	} else {
		for i, f := range p.filters {
			if err := idx.Insert(ids[i], f); err != nil {
				return nil, fmt.Errorf("build: insert %d: %w", i, err)
			}
			if i%1024 == 1023 && time.Now().After(deadline) {
				return nil, fmt.Errorf("build %w after %d of %d inserts", errBudget, i+1, len(p.filters))
			}
		}
	}
	elapsed := time.Since(start)
	r.BuildSeconds = elapsed.Seconds()
	if elapsed > 0 {
		r.InsertsPerSec = float64(len(p.filters)) / elapsed.Seconds()
	}
	r.HeapBytes = max(0, int64(liveHeap())-int64(before))
	return idx, nil
}

// liveHeap returns the bytes of live heap objects after a full GC.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// timeMatches warms up, estimates a pass over all events, does as many
// of o.Runs passes as the budget allows (at least one), and records the
// median over passes of each pass's mean, median and p99. It returns the
// number of matches of each event.
func timeMatches(idx match.Index, events []match.Event, o Options, r *Result, deadline time.Time) ([]int, error) {
	if len(events) == 0 {
		return nil, nil
	}
	var dst []match.ID
	warm := min(o.Warmup, len(events))
	start := time.Now()
	for i := range warm {
		dst = idx.Match(events[i], dst[:0])
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("warm-up %w after %d events", errBudget, i+1)
		}
	}
	perPass := time.Since(start) / time.Duration(max(warm, 1)) * time.Duration(len(events))
	left := time.Until(deadline)
	if perPass > left {
		return nil, fmt.Errorf("one pass over %d events estimated at %v, %w (%v left)",
			len(events), perPass.Round(time.Millisecond), errBudget, left.Round(time.Millisecond))
	}
	runs := max(1, min(o.Runs, int(left/max(perPass, 1))))
	var means, medians, p99s []float64
	times := make([]time.Duration, len(events))
	counts := make([]int, len(events))
	var cpus []float64
	defer cpuclock.LockThread()()
	for range runs {
		runtime.GC()
		cpu0 := cpuclock.Thread()
		for i, e := range events {
			t0 := time.Now()
			dst = idx.Match(e, dst[:0])
			times[i] = time.Since(t0)
			counts[i] = len(dst)
		}
		if cpuclock.Supported {
			cpus = append(cpus, float64(cpuclock.Thread()-cpu0)/float64(len(events)))
		}
		mean, median, p99 := summarize(times)
		means, medians, p99s = append(means, mean), append(medians, median), append(p99s, p99)
	}
	r.Runs = runs
	r.MeanNs, r.MedianNs, r.P99Ns = Median(means), Median(medians), Median(p99s)
	if len(cpus) == runs {
		r.CPUNs = Median(cpus)
	}
	matches := 0
	for _, c := range counts {
		matches += c
	}
	r.MatchesPerEvent = float64(matches) / float64(len(events))
	return counts, nil
}

// summarize returns the mean, median and 99th percentile (nearest rank)
// of ts in nanoseconds.
func summarize(ts []time.Duration) (mean, median, p99 float64) {
	s := slices.Clone(ts)
	slices.Sort(s)
	var sum time.Duration
	for _, t := range s {
		sum += t
	}
	return float64(sum) / float64(len(s)), quantile(s, 0.5), quantile(s, 0.99)
}

// quantile returns the nearest-rank q-quantile of sorted ts.
func quantile(sorted []time.Duration, q float64) float64 {
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return float64(sorted[min(max(k, 0), len(sorted)-1)])
}

// Median returns the median of xs (0 for none); xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// bloomMeasures records candidates per event and the false-positive rate
// of structures that expose their raw candidates (untimed), given each
// event's exact match count. Past the deadline it stops early and says
// over how many events the figures were taken.
func bloomMeasures(idx match.Index, events []match.Event, counts []int, r *Result, deadline time.Time) {
	raw, ok := idx.(match.RawMatcher)
	if !ok || len(events) == 0 {
		return
	}
	var cand, exact, negatives, n int
	var dst []match.ID
	for i, e := range events {
		dst = raw.MatchRaw(e, dst[:0])
		cand += len(dst)
		exact += counts[i]
		negatives += idx.Len() - counts[i]
		n++
		if time.Now().After(deadline) {
			break
		}
	}
	if n < len(events) {
		r.Reason = fmt.Sprintf("Bloom candidates counted on the first %d of %d events (time budget)", n, len(events))
	}
	cpe := float64(cand) / float64(n)
	r.CandidatesPerEvent = &cpe
	if negatives > 0 {
		fp := float64(cand-exact) / float64(negatives)
		r.FalsePositiveRate = &fp
	}
}
