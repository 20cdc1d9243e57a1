package durablebench

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/pebblestore"
)

// BenchmarkSiftDurable runs issue 9's shapes through the Sift mesh with
// b.N events in the throughput phase (at least 1,000): one or two SHBs,
// 100 or 1,000 subscribers (each matching 10% of the events), with and
// without subscribers away 500 ms every 3 s. It reports delivered events/s,
// acknowledged publishes/s, CPU microseconds per delivered event and the
// paced p50 latency (500 events at 100/s). `sift bench durable` runs the
// same with medians of alternating runs, the catch-up and the JetStream
// peer.
func BenchmarkSiftDurable(b *testing.B) {
	for _, shbs := range []int{1, 2} {
		for _, subs := range []int{100, 1000} {
			for _, churn := range []Churn{{}, {Every: 3 * time.Second, For: 500 * time.Millisecond}} {
				name := fmt.Sprintf("shbs=%d/subs=%d/churn=%v", shbs, subs, churn.On())
				b.Run(name, func(b *testing.B) {
					cfg := Config{Systems: []System{Sift{}}, Topology: Topology{Hops: 2, SHBs: shbs}, Subscribers: subs,
						Events: max(b.N, 1000), LatencyEvents: 500, Churn: churn, Runs: 1, Dir: b.TempDir()}
					reportRun(b, cfg)
				})
			}
		}
	}
}

// BenchmarkSiftDurableHops is the durable latency over a chain of routers
// (5: PHB, 3 intermediate, SHB) with 10 subscribers, paced at 100
// events/s: b.N latency events (at least 200).
func BenchmarkSiftDurableHops(b *testing.B) {
	for _, hops := range []int{2, 5} {
		b.Run(fmt.Sprintf("hops=%d", hops), func(b *testing.B) {
			cfg := Config{Systems: []System{Sift{}}, Topology: Topology{Hops: hops}, Subscribers: 10, Events: 1000,
				LatencyEvents: max(b.N, 200), Runs: 1, Dir: b.TempDir()}
			reportRun(b, cfg)
		})
	}
}

func reportRun(b *testing.B, cfg Config) {
	b.ResetTimer()
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	r := rep.Results[0]
	b.ReportMetric(r.DeliveredPerS, "delivered/s")
	b.ReportMetric(r.AckedPerSec, "acked/s")
	b.ReportMetric(r.CPUPerDelivery(), "cpu-us/delivery")
	b.ReportMetric(r.Paced.P50/1e3, "p50-ms")
	b.ReportMetric(r.Paced.P99/1e3, "p99-ms")
}

// BenchmarkSHBLog compares the SHB's PFS (one record per matched event
// listing the matching subscribers, durable.PFSLog) with per-subscriber
// event logs (the whole event written once per matching subscriber) on
// Pebble with synced group commits of 64 events, with 100 and 1,000
// subscribers each matching 10% of the 432-byte events. It extends
// durable/pebblestore's BenchmarkSHBWrite (100 subscribers) to the
// seed's larger subscriber counts.
func BenchmarkSHBLog(b *testing.B) {
	const group = 64
	for _, subs := range []int{100, 1000} {
		ev := NewEvents(10, 200, 1)
		sids := make([][]uint64, ev.Groups()) // subscribers of each group
		for i := range subs {
			g := ev.Sub(i).Group
			sids[g] = append(sids[g], uint64(i+1))
		}
		b.Run(fmt.Sprintf("pfs/subs=%d", subs), func(b *testing.B) {
			st := openStore(b)
			l := durable.NewPFSLog("p", st)
			for i := range b.N {
				l.Append(durable.Tick(i+1), sids[ev.Group(i)])
				if (i+1)%group == 0 || i == b.N-1 {
					if err := st.Apply(l.TakeBatch(), true); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
		b.Run(fmt.Sprintf("per-subscriber/subs=%d", subs), func(b *testing.B) {
			st := openStore(b)
			batch := &durable.Batch{}
			for i := range b.N {
				enc := durable.AppendEvent(nil, ev.Event(i))
				for _, sid := range sids[ev.Group(i)] {
					k := binary.BigEndian.AppendUint64([]byte("q"), sid)
					batch.Set(binary.BigEndian.AppendUint64(k, uint64(i+1)), enc)
				}
				if (i+1)%group == 0 || i == b.N-1 {
					if err := st.Apply(batch, true); err != nil {
						b.Fatal(err)
					}
					batch = &durable.Batch{}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func openStore(b *testing.B) *pebblestore.Store {
	st, err := pebblestore.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}
