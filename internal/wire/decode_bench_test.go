package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
)

// stockBatch is the workload of the decoding benchmarks: the ~200-byte
// stock events of the router benchmarks (bench/workload Stock, padded
// with an order id and an account, as router/bench_test.go's padded does),
// and the names the stock filters constrain (what a router's Wanted
// holds).
type stockBatch struct {
	events []match.Event
	wanted *Wanted
}

// stockEvents is the number of events per benchmark frame: a busy
// router's batch.
const stockEvents = 256

func newStockBatch(b *testing.B) stockBatch {
	b.Helper()
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 1000, Events: stockEvents}, 1)
	if err != nil {
		b.Fatal(err)
	}
	var sb stockBatch
	for i, e := range w.Events {
		attrs := []match.Attr{
			{Name: "order", Value: match.Str(fmt.Sprintf("ORD-%012d-%s", i, strings.Repeat("x", 40)))},
			{Name: "account", Value: match.Str(fmt.Sprintf("ACC-%08d", i%50000))},
		}
		for j := range e.Len() {
			attrs = append(attrs, e.At(j))
		}
		sb.events = append(sb.events, match.MustEvent(attrs...))
	}
	var names []string
	for _, f := range w.Filters {
		names = append(names, f.Attrs()...)
	}
	sb.wanted = NewWanted(names)
	return sb
}

// deliverBody is a Deliver body of the batch's events, each to ~10
// subscription ids of 1,000 (the chain benchmark's ~83 ids per event over
// ~8.5 subscriber connections).
func (sb stockBatch) deliverBody() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	m := &Deliver{}
	for _, e := range sb.events {
		subs := make([]uint64, 5+r.IntN(11))
		for i := range subs {
			subs[i] = 1 + r.Uint64N(1000)
		}
		slices.Sort(subs)
		m.Items = append(m.Items, DeliverItem{Subs: slices.Compact(subs), Event: e})
	}
	return m.AppendBody(nil)
}

// BenchmarkDecodeStock decodes frames of stockEvents stock events the ways
// the chain benchmark does: a subscriber connection's Deliver frame,
// borrowed (DecodeBorrowedDeliver) and owned (Decode), and a router's
// Publish frame (DecodeOwnedPublish, keeping the attributes the stock
// filters name). It reports ns/event and B/event (bytes allocated).
//
//	go test -run XXX -bench DecodeStock ./internal/wire
func BenchmarkDecodeStock(b *testing.B) {
	sb := newStockBatch(b)
	deliver := sb.deliverBody()
	publish := (&Publish{Seq: 1, Events: sb.events}).AppendBody(nil)
	b.Run("deliver-borrowed", func(b *testing.B) {
		var d EventDecoder
		kept := 0
		benchDecode(b, func() error {
			return d.DecodeBorrowedDeliver(deliver, func(subs []uint64, e match.Event) { kept += len(subs) + e.Len() })
		})
	})
	b.Run("deliver-owned", func(b *testing.B) {
		var d EventDecoder
		benchDecode(b, func() error {
			_, err := d.Decode(TypeDeliver, deliver)
			return err
		})
	})
	b.Run("publish-router", func(b *testing.B) {
		d := EventDecoder{Wanted: sb.wanted}
		bodies := ownedCopies(publish, 64)
		i := 0
		benchDecode(b, func() error {
			i++
			_, err := d.DecodeOwnedPublish(bodies[i%len(bodies)])
			return err
		})
	})
}

// benchDecode runs decode (stockEvents events: one frame) b.N times and
// reports per-event figures: wall and process CPU time (the garbage
// collector's work included; on a loaded machine the CPU figure is the
// one to compare), bytes and allocations.
func benchDecode(b *testing.B, decode func() error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu := cpuclock.Process()
	for b.Loop() {
		if err := decode(); err != nil {
			b.Fatal(err)
		}
	}
	cpu = cpuclock.Process() - cpu
	runtime.ReadMemStats(&after)
	n := float64(b.N) * stockEvents
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/event")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/event")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkEncodeStock is a publisher's work per stock event: CheckEvent,
// then AppendEvent into a reused buffer (check-append), and the two in
// one pass, as the client does (checked).
//
//	go test -run XXX -bench EncodeStock ./internal/wire
func BenchmarkEncodeStock(b *testing.B) {
	sb := newStockBatch(b)
	var buf []byte
	b.Run("check-append", func(b *testing.B) {
		benchDecode(b, func() error {
			for _, e := range sb.events {
				if err := CheckEvent(e); err != nil {
					return err
				}
				buf = AppendEvent(buf[:0], e)
			}
			return nil
		})
	})
	b.Run("checked", func(b *testing.B) {
		benchDecode(b, func() error {
			for _, e := range sb.events {
				var err error
				if buf, err = AppendCheckedEvent(buf[:0], e); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// BenchmarkDecodeNetTopic is the first router's decoding of a publisher's
// PublishDict frame in `sift bench net --workload topic`: stockEvents of
// the workload's seven-attribute events, keeping only the name its
// subscriptions constrain (symbol), as the router's Wanted does; and the
// same events as a PublishCompact frame (compact-).
//
//	go test -run XXX -bench DecodeNetTopic ./internal/wire
func BenchmarkDecodeNetTopic(b *testing.B) {
	w, err := workload.Net(workload.NetConfig{Kind: workload.NetTopic, Events: stockEvents}, 1)
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	for _, s := range w.Subs {
		names = append(names, s.Filter.Attrs()...)
	}
	for _, c := range []struct {
		name   string
		body   []byte
		decode func(*EventDecoder, []byte, int) (*Publish, error)
	}{
		{"", (&PublishDict{Publish{Seq: 1, Events: w.Events}}).AppendBody(nil), (*EventDecoder).DecodeOwnedPublishDict},
		{"compact-", (&PublishCompact{Publish{Seq: 1, Events: w.Events}}).AppendBody(nil), (*EventDecoder).DecodeOwnedPublishCompact},
	} {
		d := EventDecoder{Wanted: NewWanted(names)}
		bodies := ownedCopies(c.body, 64)
		wire := float64(len(c.body)) / float64(len(w.Events))
		i := 0
		b.Run(c.name+"decode", func(b *testing.B) {
			benchDecode(b, func() error {
				i++
				_, err := c.decode(&d, bodies[i%len(bodies)], HardMaxFrame)
				return err
			})
			b.ReportMetric(wire, "wire-B/event")
		})
		// forward: and the plain encoding of every eleventh event (RawAt),
		// as the router writes out the ~9% of topic events that go on.
		b.Run(c.name+"forward", func(b *testing.B) {
			benchDecode(b, func() error {
				i++
				m, err := c.decode(&d, bodies[i%len(bodies)], HardMaxFrame)
				for j := 0; err == nil && j < len(m.Events); j += 11 {
					m.RawAt(j)
				}
				return err
			})
			b.ReportMetric(wire, "wire-B/event")
		})
	}
}

// ownedCopies returns n copies of body for the owned decoders, whose events
// alias the body they were decoded from, so a benchmark cycles through
// copies instead of decoding into the same bytes again.
func ownedCopies(body []byte, n int) [][]byte {
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = bytes.Clone(body)
	}
	return bodies
}

// BenchmarkEncodeNetTopic is a publisher's encoding of the topic
// workload's events into a DictBatch, as PublishDict and as
// PublishCompact frames of the router's default size.
//
//	go test -run XXX -bench EncodeNetTopic ./internal/wire
func BenchmarkEncodeNetTopic(b *testing.B) {
	w, err := workload.Net(workload.NetConfig{Kind: workload.NetTopic, Events: 4096}, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, compact := range []bool{false, true} {
		name := "dict"
		if compact {
			name = "compact"
		}
		b.Run(name, func(b *testing.B) {
			var p DictBatch
			p.SetCompact(compact)
			wire, n := 0, 0
			i := 0
			for b.Loop() {
				if p.Size() > DefaultMaxFrame/16 {
					wire, n = wire+p.WireSize(), n+p.Len()
					p.Reset()
				}
				if _, err := p.AddChecked(w.Events[i%len(w.Events)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if n > 0 {
				b.ReportMetric(float64(wire)/float64(n), "wire-B/event")
			}
		})
	}
}
