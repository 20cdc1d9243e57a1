package core

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkRouteBatchHEM routes HEM events through an engine over the
// router's default index on more than one core (fast-parallel: one shard
// per core, spread from 2^18 subscriptions on) holding 10^6 HEM subscriptions
// of 64 client interfaces: one event at a time (Route, the path before
// batches) against batches of 64 (RouteBatch, the loop's publish path:
// every shard matches the whole batch at once). ns/op is wall time per
// event; cpu-ns/op the process's CPU time per event; hits/event, the
// same for both, checks that they routed the same events to the same
// subscriptions. -count runs each path that often in a row, so to
// alternate them run the binary more than once.
//
//	go test -run '^$' -bench RouteBatchHEM -benchtime 3000x ./router/core/
func BenchmarkRouteBatchHEM(b *testing.B) {
	const subs, ifaces, batch = 1_000_000, 64, routeBatchSize
	e, events := routeBatchEngine(b, subs, ifaces)
	from := ifaceID(ifaces) // a client with no subscriptions
	b.Run(fmt.Sprintf("route/shards=%d", runtime.GOMAXPROCS(0)), func(b *testing.B) {
		hits := 0
		cpu := cpuclock.Process()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			hits += len(e.Route(from, events[i%len(events)]))
		}
		reportEventCPU(b, cpu, hits)
	})
	b.Run(fmt.Sprintf("batch=%d/shards=%d", batch, runtime.GOMAXPROCS(0)), func(b *testing.B) {
		hits := 0
		cpu := cpuclock.Process()
		b.ResetTimer()
		for done := 0; done < b.N; {
			k := min(batch, b.N-done)
			start := done % len(events) // a multiple of batch, as len(events) is
			e.RouteBatch(from, events[start:start+k], func(_ int, h []Hit) { hits += len(h) })
			done += k
		}
		reportEventCPU(b, cpu, hits)
	})
}

// routeBatchSize is the batch of BenchmarkRouteBatchHEM's RouteBatch.
const routeBatchSize = 64

// reportEventCPU reports the CPU time per event since cpu and the hits
// per event (the same for both paths, as they route the same events).
func reportEventCPU(b *testing.B, cpu time.Duration, hits int) {
	b.StopTimer()
	b.ReportMetric(float64((cpuclock.Process()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(hits)/float64(b.N), "hits/event")
}

var routeBatchCache struct {
	e      *Engine
	events []match.Event
}

// routeBatchEngine returns the engine of BenchmarkRouteBatchHEM, built
// once per process.
func routeBatchEngine(b *testing.B, subs, ifaces int) (*Engine, []match.Event) {
	if c := routeBatchCache; c.e != nil {
		return c.e, c.events
	}
	w, err := workload.HEM(workload.HEMConfig{Subscriptions: subs, Events: 2000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	e := NewEngine(match.NewParallel(0, match.FastConfig{}), 0)
	for i := range ifaces + 1 {
		if err := e.Attach(ifaceID(i), KindClient); err != nil {
			b.Fatal(err)
		}
	}
	per := subs / ifaces
	for i := range ifaces {
		fs := w.Filters[i*per : (i+1)*per]
		if i == ifaces-1 {
			fs = w.Filters[i*per:]
		}
		if err := e.SubscribeBatch(ifaceID(i), 0, fs); err != nil {
			b.Fatal(err)
		}
	}
	// Whole batches of events, so that both paths route the same ones.
	evs := w.Events[:len(w.Events)/routeBatchSize*routeBatchSize]
	routeBatchCache.e, routeBatchCache.events = e, evs
	return e, evs
}
