package core

import (
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkCorePublish measures what the event path costs inside the
// core, on the far router of the chain benchmark: 10 clients with 1,000
// stock subscriptions each, batches of 64 events. "route" is the engine's
// batch routing alone, with the hits counted (what the matching loop did
// before the event path moved into the core, less the encoding of
// deliveries, which stays the driver's); "step" steps Publish and walks
// the Ready's Deliveries before Advance, as the driver does. The
// difference is the core's own share: the copies of the subscription ids
// into the Ready's arena, the Delivery records, the metrics and the Ack.
// Both are deterministic single-goroutine loops, so their instruction
// counts (valgrind --tool=callgrind) compare across loads.
//
//	go test -run XXX -bench CorePublish -benchtime 2000x ./router/core
func BenchmarkCorePublish(b *testing.B) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 10000, Events: 6400}, 1)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 64
	newCore := func() *Core {
		c, err := New(Config{Engine: NewEngine(match.NewFast(match.FastConfig{}), 0)})
		if err != nil {
			b.Fatal(err)
		}
		for id := range ConnID(11) {
			if err := c.Step(Attach{Conn: id + 1}); err != nil {
				b.Fatal(err)
			}
		}
		for id := range ConnID(10) {
			for i, f := range w.Filters[id*1000 : (id+1)*1000] {
				c.Step(Subscribe{Conn: id + 1, Sub: uint64(i + 1), Filter: f.String()})
			}
		}
		for c.HasReady() {
			c.Ready()
			c.Advance()
		}
		return c
	}
	var pubs []*wire.Publish
	for i := 0; i+batch <= len(w.Events); i += batch {
		p := &wire.Publish{Seq: uint64(len(pubs) + 1), Events: w.Events[i : i+batch]}
		for _, ev := range p.Events {
			p.Raw = append(p.Raw, wire.AppendEvent(nil, ev))
		}
		pubs = append(pubs, p)
	}
	b.Run("route", func(b *testing.B) {
		c := newCore()
		b.ReportAllocs()
		b.ResetTimer()
		ids := 0
		for i := range b.N {
			p := pubs[i%len(pubs)]
			c.eng.RouteBatch(11, p.Events, func(_ int, hits []Hit) {
				for _, h := range hits {
					ids += len(h.Subs)
				}
			})
		}
		b.ReportMetric(float64(ids)/float64(b.N*batch), "ids/event")
	})
	b.Run("step", func(b *testing.B) {
		c := newCore()
		b.ReportAllocs()
		b.ResetTimer()
		ids := 0
		for i := range b.N {
			if err := c.Step(Publish{Conn: 11, Pub: pubs[i%len(pubs)]}); err != nil {
				b.Fatal(err)
			}
			rd := c.Ready()
			for _, d := range rd.Deliveries {
				ids += len(d.Subs)
			}
			c.Advance()
		}
		b.ReportMetric(float64(ids)/float64(b.N*batch), "ids/event")
	})
}
