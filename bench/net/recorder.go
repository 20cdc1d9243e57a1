package netbench

import (
	"context"
	"fmt"
	"math"
	"sync"
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

// recorder checks and times deliveries.
//
// The throughput phase publishes sequences 0, 1, 2, ... until its
// duration has passed, cycling over a lap of `lap` prebuilt events:
// sequence s carries AttrSeq s mod lap, so the run can last as long as it
// must without building (or holding) an event per sequence. The latency
// phase's j-th event carries AttrSeq lap+j. The number carried is the
// event's index; index i carries workload event i mod len(events).
//
// Each subscriber's deliveries are checked against its filter (an
// unexpected event is counted as wrong), timed from the publish stamp,
// and counted, so a publisher can keep a bounded window of events in
// flight end to end. A window below the lap makes laps of one index
// arrive one after another, so a subscriber counts the laps it got per
// index: a count beyond the laps published so far is a repeat, and at the
// end every count must equal the laps published. (A loss in one lap made
// up by a repeat of the same index in another is not told apart: the two
// events are the same bytes.)
type recorder struct {
	pool     [][]match.Attr // workload events' attributes
	built    []match.Event  // one lap of unstamped events
	subs     []*subRecorder
	lap      int          // indexes below lap are the throughput phase
	cum      []int64      // cum[i]: deliveries expected for indexes < i
	total    int          // indexes: lap + latency events
	taken    atomic.Int64 // throughput sequences handed out so far
	takeMu   sync.Mutex   // orders take against closeTakes
	limit    int64        // sequences to hand out: unbounded until closeTakes
	progress chan struct{}
	got      atomic.Int64 // correct deliveries, every subscriber
}

// subRecorder is one subscriber's view; deliver runs on one goroutine per
// subscriber, so only the atomics are shared.
type subRecorder struct {
	r       *recorder
	want    []bool   // per workload event: does the filter match it
	laps    []uint32 // per index: deliveries so far
	wrong   atomic.Int64
	loaded  Histogram // throughput phase
	paced   Histogram // latency phase
	correct atomic.Int64
}

func newRecorder(w workload.NetWorkload, lap, latency int) *recorder {
	r := &recorder{lap: lap, total: lap + latency, limit: math.MaxInt64, progress: make(chan struct{}, 1)}
	for _, e := range w.Events {
		attrs := make([]match.Attr, e.Len())
		for i := range attrs {
			attrs[i] = e.At(i)
		}
		r.pool = append(r.pool, attrs)
	}
	perEvent := make([]int64, len(w.Events))
	for _, s := range w.Subs {
		sr := &subRecorder{r: r, want: make([]bool, len(w.Events)), laps: make([]uint32, r.total)}
		for i, e := range w.Events {
			if s.Filter.Matches(e) {
				sr.want[i] = true
				perEvent[i]++
			}
		}
		r.subs = append(r.subs, sr)
	}
	r.cum = make([]int64, r.total+1)
	for i := range r.total {
		r.cum[i+1] = r.cum[i] + perEvent[i%len(perEvent)]
	}
	r.prebuild()
	return r
}

// stampEvery: in the throughput phase one event in stampEvery carries
// its publish time; the others are built before the phase starts, so that
// the benchmark's own event building stays out of the measured CPU.
const stampEvery = 16

// prebuild builds one lap of unstamped events (AttrTime 0).
func (r *recorder) prebuild() {
	r.built = make([]match.Event, r.lap)
	for i := range r.lap {
		if i%stampEvery != 0 {
			r.built[i] = r.build(i, 0)
		}
	}
}

// expected is the number of deliveries expected for throughput sequences
// below s.
func (r *recorder) expected(s int64) int64 {
	laps, rest := s/int64(r.lap), s%int64(r.lap)
	return laps*r.cum[r.lap] + r.cum[rest]
}

// expectedAll is the deliveries expected once the throughput phase
// published n sequences and the latency phase all its events.
func (r *recorder) expectedAll(n int64) int64 {
	return r.expected(n) + r.cum[r.total] - r.cum[r.lap]
}

// take hands out the next throughput sequence, or reports false once
// closeTakes has handed out its limit. Every sequence it hands out is
// below the final limit, so the published sequences are exactly those
// below it (a sequence taken and then checked against a limit set in
// between would be published above it, and count as unexpected).
func (r *recorder) take() (int64, bool) {
	r.takeMu.Lock()
	defer r.takeMu.Unlock()
	s := r.taken.Load()
	if s >= r.limit {
		return s, false
	}
	r.taken.Store(s + 1)
	return s, true
}

// closeTakes ends the handing out at what was handed out so far, or at
// least atLeast sequences, and returns that limit.
func (r *recorder) closeTakes(atLeast int64) int64 {
	r.takeMu.Lock()
	defer r.takeMu.Unlock()
	r.limit = max(r.taken.Load(), atLeast)
	return r.limit
}

// takesLimit is the limit closeTakes set (unbounded before).
func (r *recorder) takesLimit() int64 {
	r.takeMu.Lock()
	defer r.takeMu.Unlock()
	return r.limit
}

// event returns throughput sequence s's event: prebuilt, or stamped with
// the time now (one in stampEvery).
func (r *recorder) event(s int64) match.Event {
	i := int(s % int64(r.lap))
	if i%stampEvery != 0 {
		return r.built[i]
	}
	return r.build(i, time.Now().UnixNano())
}

// latencyEvent returns the latency phase's j-th event, stamped now.
func (r *recorder) latencyEvent(j int) match.Event {
	return r.build(r.lap+j, time.Now().UnixNano())
}

func (r *recorder) build(i int, stamp int64) match.Event {
	base := r.pool[i%len(r.pool)]
	attrs := make([]match.Attr, len(base), len(base)+2)
	copy(attrs, base)
	attrs = append(attrs,
		match.Attr{Name: AttrSeq, Value: match.Int(int64(i))},
		match.Attr{Name: AttrTime, Value: match.Int(stamp)})
	return match.MustEvent(attrs...)
}

// deliver records one delivery to subscriber i.
func (sr *subRecorder) deliver(e match.Event) {
	now := time.Now().UnixNano()
	sv, ok1 := e.Get(AttrSeq)
	tv, ok2 := e.Get(AttrTime)
	i := int(sv.AsInt())
	if !ok1 || !ok2 || i < 0 || i >= len(sr.laps) || !sr.want[i%len(sr.want)] {
		sr.wrong.Add(1)
		return
	}
	lap := int64(sr.laps[i])
	published := int64(1) // latency events are published once
	if i < sr.r.lap {
		// Laps of index i handed out so far (a sequence is taken just
		// before it is published).
		published = (sr.r.taken.Load() - int64(i) + int64(sr.r.lap) - 1) / int64(sr.r.lap)
	}
	if lap >= published {
		sr.wrong.Add(1)
		return
	}
	sr.laps[i]++
	switch d := time.Duration(now - tv.AsInt()); {
	case tv.AsInt() == 0: // not stamped
	case i < sr.r.lap:
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
func (r *recorder) windowOpen(s int64, window int) bool {
	return s <= int64(window) || r.got.Load() >= r.expected(s-int64(window))
}

// waitWindow blocks until windowOpen(s, window), or stall passes without
// progress.
func (r *recorder) waitWindow(ctx context.Context, s int64, window int, stall time.Duration) error {
	if r.windowOpen(s, window) {
		return nil
	}
	return r.waitFor(ctx, r.expected(s-int64(window)), stall)
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
// an earlier one, over every subscriber, plus the expected ones missing
// once n throughput sequences and every latency event were published.
func (r *recorder) wrong(n int64) int64 {
	var bad int64
	for _, sr := range r.subs {
		bad += sr.wrong.Load()
		for i, got := range sr.laps {
			if !sr.want[i%len(sr.want)] {
				continue
			}
			want := int64(1)
			if i < r.lap {
				want = (n - int64(i) + int64(r.lap) - 1) / int64(r.lap)
			}
			if d := int64(got) - want; d != 0 {
				bad += max(d, -d)
			}
		}
	}
	return bad
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
