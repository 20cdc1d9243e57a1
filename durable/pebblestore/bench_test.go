package pebblestore

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// The SHB workload of the seed's PFS microbenchmark, scaled: 418-byte
// events (a 250-byte payload), benchSubs durable subscribers each matching
// an event with probability benchMatch, events committed in synced groups
// (both layouts get the same group commit: benchGroup events per sync in
// the catch-up benchmarks, and 16 or 256 in BenchmarkSHBWrite).
const (
	benchSubs  = 100
	benchMatch = 0.1
	benchGroup = 16
)

type benchEvent struct {
	tick    durable.Tick
	encoded []byte
	sids    []uint64
}

func benchEvents(n int) []benchEvent {
	rng := rand.New(rand.NewPCG(42, 42))
	payload := strings.Repeat("x", 250)
	evs := make([]benchEvent, n)
	for i := range evs {
		e := match.MustEvent(
			match.Attr{Name: "payload", Value: match.Str(payload)},
			match.Attr{Name: "symbol", Value: match.Str("IBM")},
			match.Attr{Name: "price", Value: match.MustFloat(rng.Float64() * 100)},
			match.Attr{Name: "seq", Value: match.Int(int64(i))},
		)
		var sids []uint64
		for s := range uint64(benchSubs) {
			if rng.Float64() < benchMatch {
				sids = append(sids, s+1)
			}
		}
		evs[i] = benchEvent{tick: durable.Tick(1000 + 10*i), encoded: durable.AppendEvent(nil, e), sids: sids}
	}
	return evs
}

func subLogKey(sid uint64, t durable.Tick) []byte {
	k := []byte("q")
	k = binary.BigEndian.AppendUint64(k, sid)
	return binary.BigEndian.AppendUint64(k, uint64(t))
}

// writePFS writes events the PFS way: one record per event with a match.
func writePFS(b testing.TB, st *Store, l *durable.PFSLog, evs []benchEvent, group int) {
	for i, e := range evs {
		if len(e.sids) > 0 {
			l.Append(e.tick, e.sids)
		}
		if (i+1)%group == 0 || i == len(evs)-1 {
			if err := st.Apply(l.TakeBatch(), true); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// writePerSub writes events the message-queue way: the whole event once per
// matching subscriber, in that subscriber's log.
func writePerSub(b testing.TB, st *Store, evs []benchEvent, group int) {
	batch := &durable.Batch{}
	for i, e := range evs {
		for _, sid := range e.sids {
			batch.Set(subLogKey(sid, e.tick), e.encoded)
		}
		if (i+1)%group == 0 || i == len(evs)-1 {
			if err := st.Apply(batch, true); err != nil {
				b.Fatal(err)
			}
			batch = &durable.Batch{}
		}
	}
}

// BenchmarkSHBWrite compares the PFS with per-subscriber event logs at the
// SHB, on real Pebble in a temporary directory (the work disk).
func BenchmarkSHBWrite(b *testing.B) {
	evs := benchEvents(20_000)
	for _, group := range []int{16, 256} {
		b.Run(fmt.Sprintf("pfs/group=%d", group), func(b *testing.B) {
			st := openTemp(b)
			l := durable.NewPFSLog("p", st)
			b.ResetTimer()
			for i := 0; i < b.N; i += len(evs) {
				writePFS(b, st, l, shift(evs, i, min(len(evs), b.N-i)), group)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
		b.Run(fmt.Sprintf("per-subscriber/group=%d", group), func(b *testing.B) {
			st := openTemp(b)
			b.ResetTimer()
			for i := 0; i < b.N; i += len(evs) {
				writePerSub(b, st, shift(evs, i, min(len(evs), b.N-i)), group)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// shift returns n events with ticks moved past round i (ticks keep
// increasing across rounds).
func shift(evs []benchEvent, i, n int) []benchEvent {
	out := make([]benchEvent, n)
	for j := range out {
		out[j] = evs[j]
		out[j].tick += durable.Tick(i) * 1_000_000
	}
	return out
}

func openTemp(b testing.TB) *Store {
	st, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// BenchmarkCatchupRead reads one subscriber's whole history of 20,000
// events (about 2,000 matching): the PFS index alone, the PFS plus fetching
// each event from the PHB's log, and a per-subscriber log scan.
func BenchmarkCatchupRead(b *testing.B) {
	evs := benchEvents(20_000)
	last := evs[len(evs)-1].tick
	const sid = 7
	b.Run("pfs-index", func(b *testing.B) {
		st := openTemp(b)
		l := durable.NewPFSLog("p", st)
		writePFS(b, st, l, evs, benchGroup)
		b.ResetTimer()
		for range b.N {
			ts, err := l.Read(sid, 0, last)
			if err != nil || len(ts) == 0 {
				b.Fatal(err, len(ts))
			}
		}
	})
	b.Run("pfs+phb-log", func(b *testing.B) {
		st := openTemp(b)
		l := durable.NewPFSLog("p", st)
		writePFS(b, st, l, evs, benchGroup)
		phb := openTemp(b)
		batch := &durable.Batch{}
		for _, e := range evs {
			batch.Set(append(durable.PHBLogPrefix("p"), be(uint64(e.tick))...), e.encoded)
		}
		if err := phb.Apply(batch, true); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			ts, err := l.Read(sid, 0, last)
			if err != nil {
				b.Fatal(err)
			}
			for _, t := range ts {
				v, ok, err := phb.Get(append(durable.PHBLogPrefix("p"), be(uint64(t))...))
				if err != nil || !ok {
					b.Fatal(err)
				}
				if _, err := durable.DecodeEvent(v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("per-subscriber", func(b *testing.B) {
		st := openTemp(b)
		writePerSub(b, st, evs, benchGroup)
		b.ResetTimer()
		for range b.N {
			n := 0
			err := st.Scan(subLogKey(sid, 0), subLogKey(sid+1, 0), func(k, v []byte) bool {
				if _, err := durable.DecodeEvent(v); err != nil {
					b.Fatal(err)
				}
				n++
				return true
			})
			if err != nil || n == 0 {
				b.Fatal(err, n)
			}
		}
	})
}

// BenchmarkPHBGroupCommit drives a pubend on Pebble with a driver loop like
// a broker's: publishers wait for each acknowledgement before publishing
// again; the loop steps every publish waiting in its inbox, takes one Ready
// and commits it with one synced write (group commit), then acknowledges.
func BenchmarkPHBGroupCommit(b *testing.B) {
	for _, pubs := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("publishers=%d", pubs), func(b *testing.B) {
			benchGroupCommit(b, pubs)
		})
	}
}

type publishReq struct {
	env durable.Envelope
	ack chan struct{}
}

func benchGroupCommit(b *testing.B, pubs int) {
	st := openTemp(b)
	p, err := durable.NewPubend(durable.PubendConfig{ID: "p", Node: "phb"}, st)
	if err != nil {
		b.Fatal(err)
	}
	ev := match.MustEvent(match.Attr{Name: "payload", Value: match.Str(strings.Repeat("x", 250))})
	inbox := make(chan publishReq, pubs)
	syncs := 0
	done := make(chan struct{})
	go func() { // the driver loop
		defer close(done)
		now := durable.Tick(1)
		waiting := map[string]chan struct{}{}
		for req := range inbox {
			batch := []publishReq{req}
		drain:
			for {
				select {
				case r, ok := <-inbox:
					if !ok {
						break drain
					}
					batch = append(batch, r)
				default:
					break drain
				}
			}
			for _, r := range batch {
				now++
				if err := p.Step(now, r.env); err != nil {
					panic(err)
				}
				waiting[r.env.Msg.Publisher] = r.ack
			}
			rd := p.Ready()
			if err := st.Apply(rd.Writes, rd.Sync); err != nil {
				panic(err)
			}
			syncs++
			for _, m := range rd.Msgs {
				if m.Msg.Kind == durable.MsgPubAck {
					waiting[m.Msg.Publisher] <- struct{}{}
				}
			}
		}
	}()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + pubs - 1) / pubs
	for i := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("pub%d", i)
			ack := make(chan struct{}, 1)
			for seq := 1; seq <= per; seq++ {
				inbox <- publishReq{env: durable.Envelope{From: id, To: "phb", Msg: durable.Msg{
					Kind: durable.MsgPublish, Publisher: id, Seq: uint64(seq), Event: ev}}, ack: ack}
				<-ack
			}
		}()
	}
	wg.Wait()
	close(inbox)
	<-done
	total := per * pubs
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(syncs)/b.Elapsed().Seconds(), "syncs/s")
	b.ReportMetric(float64(total)/float64(syncs), "events/sync")
}

// BenchmarkLogTickLookup answers one-tick nacks from a pubend's log of
// 100,000 events: a scan over the tick's key (an iterator set up per
// tick, as the pubend answered every range) against a point lookup
// (Pubend.answerTick), with the log still in the memtable and flushed to
// sstables. One op is 1,000 ticks, every 100th of the log (a subscriber
// of one group in 100).
func BenchmarkLogTickLookup(b *testing.B) {
	evs := benchEvents(100_000)
	key := func(t durable.Tick) []byte { return append(durable.PHBLogPrefix("p"), be(uint64(t))...) }
	for _, flushed := range []bool{false, true} {
		st := openTemp(b)
		for i := 0; i < len(evs); i += 1000 {
			batch := &durable.Batch{}
			for _, e := range evs[i : i+1000] {
				batch.Set(key(e.tick), e.encoded)
			}
			if err := st.Apply(batch, false); err != nil {
				b.Fatal(err)
			}
		}
		if flushed {
			if err := st.db.Flush(); err != nil {
				b.Fatal(err)
			}
		}
		where := map[bool]string{false: "memtable", true: "flushed"}[flushed]
		b.Run(where+"/scan", func(b *testing.B) {
			for range b.N {
				for i := 0; i < len(evs); i += 100 {
					k := key(evs[i].tick)
					n := 0
					if err := st.Scan(k, key(evs[i].tick+1), func(_, v []byte) bool { n += len(v); return true }); err != nil || n == 0 {
						b.Fatal(err, n)
					}
				}
			}
		})
		b.Run(where+"/get", func(b *testing.B) {
			for range b.N {
				for i := 0; i < len(evs); i += 100 {
					if v, ok, err := st.Get(key(evs[i].tick)); err != nil || !ok || len(v) == 0 {
						b.Fatal(err, ok)
					}
				}
			}
		})
	}
}
