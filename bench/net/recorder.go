package netbench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// Event attributes the benchmark adds to every workload event: its
// sequence number in the run and its publish time (Unix nanoseconds).
const (
	AttrSeq  = "bench_seq"
	AttrTime = "bench_ts"
)

// recorder checks and times deliveries. Published events are numbered by
// a sequence; sequence s carries workload event s mod len(events). Each
// subscriber's deliveries are checked against its filter (an unexpected
// or repeated event is counted as wrong), timed from the publish stamp,
// and counted, so a publisher can keep a bounded window of events in
// flight end to end.
type recorder struct {
	pool     [][]match.Attr // workload events' attributes
	built    []match.Event  // the throughput phase's unstamped events
	subs     []*subRecorder
	split    int     // sequences below split are the throughput phase
	cum      []int64 // cum[s]: deliveries expected for sequences < s
	total    int     // sequences published in the run
	progress chan struct{}
	got      atomic.Int64 // correct deliveries, every subscriber
}

// subRecorder is one subscriber's view; deliver runs on one goroutine per
// subscriber, so only got is shared.
type subRecorder struct {
	r       *recorder
	want    []bool // per workload event: does the filter match it
	seen    []bool // per sequence: delivered already
	wrong   atomic.Int64
	loaded  Histogram // throughput phase
	paced   Histogram // latency phase
	correct atomic.Int64
}

func newRecorder(w workload.NetWorkload, split, total int) *recorder {
	r := &recorder{split: split, total: total, progress: make(chan struct{}, 1)}
	for _, e := range w.Events {
		attrs := make([]match.Attr, e.Len())
		for i := range attrs {
			attrs[i] = e.At(i)
		}
		r.pool = append(r.pool, attrs)
	}
	perEvent := make([]int64, len(w.Events))
	for _, s := range w.Subs {
		sr := &subRecorder{r: r, want: make([]bool, len(w.Events)), seen: make([]bool, total)}
		for i, e := range w.Events {
			if s.Filter.Matches(e) {
				sr.want[i] = true
				perEvent[i]++
			}
		}
		r.subs = append(r.subs, sr)
	}
	r.cum = make([]int64, total+1)
	for s := range total {
		r.cum[s+1] = r.cum[s] + perEvent[s%len(perEvent)]
	}
	r.prebuild()
	return r
}

// stampEvery: in the throughput phase one event in stampEvery carries
// its publish time; the others are built before the phase starts, so that
// the benchmark's own event building stays out of the measured CPU.
const stampEvery = 16

// prebuild builds the throughput phase's unstamped events (AttrTime 0).
func (r *recorder) prebuild() {
	r.built = make([]match.Event, r.split)
	for s := range r.split {
		if s%stampEvery != 0 {
			r.built[s] = r.build(s, 0)
		}
	}
}

// event returns sequence s's event: prebuilt, or stamped with the time
// now (every event of the latency phase, one in stampEvery before it).
func (r *recorder) event(s int) match.Event {
	if s < len(r.built) && s%stampEvery != 0 {
		return r.built[s]
	}
	return r.build(s, time.Now().UnixNano())
}

func (r *recorder) build(s int, stamp int64) match.Event {
	base := r.pool[s%len(r.pool)]
	attrs := make([]match.Attr, len(base), len(base)+2)
	copy(attrs, base)
	attrs = append(attrs,
		match.Attr{Name: AttrSeq, Value: match.Int(int64(s))},
		match.Attr{Name: AttrTime, Value: match.Int(stamp)})
	return match.MustEvent(attrs...)
}

// deliver records one delivery to subscriber i.
func (sr *subRecorder) deliver(e match.Event) {
	now := time.Now().UnixNano()
	sv, ok1 := e.Get(AttrSeq)
	tv, ok2 := e.Get(AttrTime)
	s := int(sv.AsInt())
	if !ok1 || !ok2 || s < 0 || s >= len(sr.seen) || !sr.want[s%len(sr.want)] || sr.seen[s] {
		sr.wrong.Add(1)
		return
	}
	sr.seen[s] = true
	switch d := time.Duration(now - tv.AsInt()); {
	case tv.AsInt() == 0: // not stamped
	case s < sr.r.split:
		sr.loaded.Record(d)
	default:
		sr.paced.Record(d)
	}
	sr.correct.Add(1)
	sr.r.got.Add(1)
	select {
	case sr.r.progress <- struct{}{}:
	default:
	}
}

// windowOpen says whether sequence s may be published: every delivery
// expected for sequences below s - window has arrived.
func (r *recorder) windowOpen(s, window int) bool {
	return s <= window || r.got.Load() >= r.cum[s-window]
}

// waitWindow blocks until windowOpen(s, window), or stall passes without
// progress.
func (r *recorder) waitWindow(ctx context.Context, s, window int, stall time.Duration) error {
	if r.windowOpen(s, window) {
		return nil
	}
	return r.waitFor(ctx, r.cum[s-window], stall)
}

// waitFor blocks until n correct deliveries arrived; it fails when ctx
// ends or when stall passes without any delivery.
func (r *recorder) waitFor(ctx context.Context, n int64, stall time.Duration) error {
	timer := time.NewTimer(stall)
	defer timer.Stop()
	for {
		got := r.got.Load()
		if got >= n {
			return nil
		}
		select {
		case <-r.progress:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(stall)
		case <-timer.C:
			return fmt.Errorf("%d of %d deliveries after %v without progress (lost or stuck)", got, n, stall)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// wrong returns the deliveries that no filter expected or that repeated
// an earlier one, over every subscriber.
func (r *recorder) wrong() int64 {
	var n int64
	for _, sr := range r.subs {
		n += sr.wrong.Load()
	}
	return n
}

// histograms merges the subscribers' histograms of each phase; call it
// once every delivery has arrived.
func (r *recorder) histograms() (loaded, paced *Histogram) {
	loaded, paced = new(Histogram), new(Histogram)
	for _, sr := range r.subs {
		loaded.Merge(&sr.loaded)
		paced.Merge(&sr.paced)
	}
	return loaded, paced
}
