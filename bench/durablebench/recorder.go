package durablebench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	netbench "github.com/sift-pubsub/sift/bench/net"
	"github.com/sift-pubsub/sift/match"
)

// Phases of a run; events of each phase have their own range of seqs.
const (
	phaseThroughput = iota
	phaseLatency
	phaseCatchup
	phases
)

// recorder checks and times every delivery of a run: which subscriber got
// which seq (each once, only its group's), and the publish-to-deliver
// latency into per-subscriber, per-phase histograms.
type recorder struct {
	ev        Events
	bounds    [phases + 1]int // phase p's seqs are [bounds[p], bounds[p+1])
	published []atomic.Int64  // unix nanoseconds of each seq's Publish call
	subs      []*subRecord
	delivered atomic.Int64 // first deliveries, every subscriber
	last      atomic.Int64 // unix nanoseconds of the last first delivery
	// catchupFrom and catchupFirst: unix nanoseconds of the catch-up's
	// start (0: not started) and of its first delivery of a catch-up
	// event at or after it (0: none yet).
	catchupFrom, catchupFirst atomic.Int64
}

// subRecord is one subscriber's deliveries, written by its goroutine.
type subRecord struct {
	group int
	mu    sync.Mutex
	seen  []uint64 // bitset over seqs
	count int64    // first deliveries
	dups  int64
	wrong int64
	hist  [phases]netbench.Histogram
}

func newRecorder(ev Events, subs, throughput, latency, catchup int) *recorder {
	r := &recorder{ev: ev}
	r.bounds = [phases + 1]int{0, throughput, throughput + latency, throughput + latency + catchup}
	total := r.bounds[phases]
	r.published = make([]atomic.Int64, total)
	for i := range subs {
		r.subs = append(r.subs, &subRecord{group: ev.Sub(i).Group, seen: make([]uint64, (total+63)/64)})
	}
	return r
}

// event returns event s, stamped as published now.
func (r *recorder) event(s int) match.Event {
	e := r.ev.Event(s)
	r.published[s].Store(time.Now().UnixNano())
	return e
}

func (r *recorder) phaseOf(s int) int {
	for p := range phases {
		if s < r.bounds[p+1] {
			return p
		}
	}
	return phases - 1
}

// deliverTo returns subscriber i's delivery callback.
func (r *recorder) deliverTo(i int) func(match.Event) {
	sr := r.subs[i]
	return func(e match.Event) {
		now := time.Now().UnixNano()
		s := SeqOf(e)
		sr.mu.Lock()
		defer sr.mu.Unlock()
		if s < 0 || s >= len(r.published) || GroupOf(e) != sr.group || r.ev.Group(s) != sr.group {
			sr.wrong++
			return
		}
		if sr.seen[s/64]&(1<<(s%64)) != 0 {
			sr.dups++
			return
		}
		sr.seen[s/64] |= 1 << (s % 64)
		sr.hist[r.phaseOf(s)].Record(time.Duration(now - r.published[s].Load()))
		sr.count++
		r.delivered.Add(1)
		r.last.Store(now)
		if from := r.catchupFrom.Load(); from != 0 && now >= from && r.phaseOf(s) == phaseCatchup {
			r.catchupFirst.CompareAndSwap(0, now)
		}
	}
}

// expected returns the deliveries due for the events [0, upto) of every
// phase: per subscriber, the seqs of its group.
func (r *recorder) expected(upto int) int64 {
	var n int64
	g := r.ev.Groups()
	for _, sr := range r.subs {
		n += int64((upto - sr.group + g - 1) / g)
	}
	return n
}

// waitFor waits until target first deliveries have arrived, failing when
// none arrives for stall.
func (r *recorder) waitFor(ctx context.Context, target int64, stall time.Duration) error {
	seen, since := r.delivered.Load(), time.Now()
	for {
		n := r.delivered.Load()
		if n >= target {
			return nil
		}
		if n != seen {
			seen, since = n, time.Now()
		}
		if time.Since(since) > stall {
			return fmt.Errorf("%d of %d deliveries, none for %v (first missing: %s; goroutines: %s)",
				n, target, stall, r.firstMissing(target), dumpGoroutines())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d deliveries: %w", n, target, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// firstMissing names a subscriber missing a seq below the current phase
// end, for failure messages.
func (r *recorder) firstMissing(target int64) string {
	upto := 0
	for upto < len(r.published) && r.expected(upto) < target {
		upto++
	}
	for i, sr := range r.subs {
		sr.mu.Lock()
		for s := sr.group; s < upto; s += r.ev.Groups() {
			if sr.seen[s/64]&(1<<(s%64)) == 0 {
				sr.mu.Unlock()
				return fmt.Sprintf("subscriber %d, seq %d", i, s)
			}
		}
		sr.mu.Unlock()
	}
	return "none"
}

// deliveredTo returns the first deliveries so far to the subscribers
// whose index in takes.
func (r *recorder) deliveredTo(in func(int) bool) int64 {
	var n int64
	for i, sr := range r.subs {
		if in(i) {
			sr.mu.Lock()
			n += sr.count
			sr.mu.Unlock()
		}
	}
	return n
}

// counts returns the repeated and wrong deliveries so far.
func (r *recorder) counts() (dups, wrong int64) {
	for _, sr := range r.subs {
		sr.mu.Lock()
		dups += sr.dups
		wrong += sr.wrong
		sr.mu.Unlock()
	}
	return dups, wrong
}

// histogram merges every subscriber's histogram of phase p.
func (r *recorder) histogram(p int) *netbench.Histogram {
	h := new(netbench.Histogram)
	for _, sr := range r.subs {
		sr.mu.Lock()
		h.Merge(&sr.hist[p])
		sr.mu.Unlock()
	}
	return h
}

// dumpGoroutines writes every goroutine's stack to a file of its own in
// the system's temporary folder, while the run is stalled, and returns
// its name (or why it was not written): what each router's driver is
// doing when nothing is delivered.
func dumpGoroutines() string {
	f, err := os.CreateTemp("", "sift-bench-durable-goroutines-*.txt")
	if err != nil {
		return fmt.Sprintf("not written: %v", err)
	}
	werr := pprof.Lookup("goroutine").WriteTo(f, 2)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Sprintf("not written: %v", err)
	}
	return f.Name()
}
