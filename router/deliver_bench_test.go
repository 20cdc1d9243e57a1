package router

import (
	"encoding/binary"
	"fmt"
	"github.com/sift-pubsub/sift/router/core"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// deliverSideBatch is the number of events one step of the benchmark
// routes before flushing, like a Publish frame from a link.
const deliverSideBatch = 64

// BenchmarkDeliverSide measures the delivery side of the matching loop
// alone, on the far router of the issue 7 chain: 10 client connections
// with 1,000 stock subscriptions each (~8.5 connections and ~83
// subscription ids per event) and ~200-byte events. Every event is routed
// once beforehand; the timed part stages each event's hits (deliver),
// queues each step's share at the end of the step (flush), and the
// connections' writers write Deliver frames to a sink that only counts
// their items. It reports the process's CPU time and the bytes allocated
// per event.
//
//	go test -run XXX -bench DeliverSide -benchtime 200000x ./router
func BenchmarkDeliverSide(b *testing.B) {
	l, events := deliverSideLoop(b)
	sinks := make([]*countingSink, 0, len(l.conns))
	done := make(chan error, len(l.conns))
	m := l.metrics
	for id, c := range l.conns {
		s := &countingSink{}
		sinks = append(sinks, s)
		w := &connWriter{q: c.q, maxFrame: wire.DefaultMaxFrame, metrics: m, cm: m.forConn(fmt.Sprint(id), "data")}
		go func() { done <- w.runData(s) }()
	}
	b.Cleanup(func() {
		for _, c := range l.conns {
			c.q.close()
		}
		for range l.conns {
			<-done
		}
	})
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuclock.Process()
	want, ids := int64(0), 0
	at := time.Now()
	for i := range b.N {
		ev := &events[i%len(events)]
		for _, h := range ev.hits {
			l.deliver(l.conns[h.Iface], h.Subs, ev.raw, at)
			want++
			ids += len(h.Subs)
		}
		if (i+1)%deliverSideBatch == 0 {
			l.flush()
			at = time.Now()
			waitBelow(l, 1<<14) // stands for flow control
		}
	}
	l.flush()
	for written(sinks) < want {
		time.Sleep(20 * time.Microsecond)
	}
	cpu := cpuclock.Process() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/event")
	b.ReportMetric(float64(want)/float64(b.N), "deliveries/event")
	b.ReportMetric(float64(ids)/float64(b.N), "ids/event")
}

// routedEvent is an event's wire encoding and its hits at the far router.
type routedEvent struct {
	raw  []byte
	hits []core.Hit
}

// deliverSideLoop returns a matching loop with the 10 stock subscriber
// connections of the chain, and the events of the workload routed by it.
func deliverSideLoop(b *testing.B) (*matchLoop, []routedEvent) {
	b.Helper()
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 10000, Events: 20000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	l := &matchLoop{
		eng:     core.NewEngine(match.NewFast(match.FastConfig{}), 0),
		conns:   map[ifaceID]*conn{},
		metrics: NewMetrics(prometheus.NewRegistry()),
	}
	for id := range ifaceID(10) {
		if err := l.eng.Attach(id+1, core.KindClient); err != nil {
			b.Fatal(err)
		}
		for i, f := range w.Filters[id*1000 : (id+1)*1000] {
			if err := l.eng.Subscribe(id+1, uint64(i+1), f.String()); err != nil {
				b.Fatal(err)
			}
		}
		l.conns[id+1] = &conn{id: id + 1, q: newSendQueue(16, 1<<20)}
	}
	events := make([]routedEvent, len(w.Events))
	for i, e := range w.Events {
		pad := match.MustEvent(
			match.Attr{Name: "account", Value: match.Str(fmt.Sprintf("ACC-%08d", i))},
			match.Attr{Name: "order", Value: match.Str(fmt.Sprintf("ORD-%012d-%s", i, strings.Repeat("x", 40)))},
		)
		raw := wire.AppendEvent(nil, e)
		raw = append(raw, wire.AppendEvent(nil, pad)...) // ~200 bytes; the sink never decodes
		events[i].raw = raw
		for _, h := range l.eng.Route(0, e) {
			events[i].hits = append(events[i].hits, core.Hit{Iface: h.Iface, Subs: append([]uint64(nil), h.Subs...)})
		}
	}
	return l, events
}

// waitBelow waits until every connection's queue holds fewer than n
// deliveries.
func waitBelow(l *matchLoop, n int) {
	for _, c := range l.conns {
		for {
			if _, d := c.q.pending(); d < n {
				break
			}
			time.Sleep(20 * time.Microsecond) // sleeping, not spinning: the figure is CPU
		}
	}
}

// countingSink counts the items of the Deliver frames written to it.
type countingSink struct{ items atomic.Int64 }

func (s *countingSink) Write(p []byte) (int, error) {
	for b := p; len(b) > 0; {
		size := int(binary.BigEndian.Uint32(b)) + wire.HeaderLen
		n, _ := binary.Uvarint(b[wire.HeaderLen+1:])
		s.items.Add(int64(n))
		b = b[size:]
	}
	return len(p), nil
}

func (s *countingSink) Close() error { return nil }

func written(sinks []*countingSink) int64 {
	n := int64(0)
	for _, s := range sinks {
		n += s.items.Load()
	}
	return n
}
