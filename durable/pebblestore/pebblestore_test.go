package pebblestore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/memstore"
	"github.com/sift-pubsub/sift/match"
)

func open(t *testing.T, fs vfs.FS) *Store {
	t.Helper()
	s, err := Open("db", fs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// batchOf returns batch i: three keys written together.
func batchOf(i int) *durable.Batch {
	b := &durable.Batch{}
	for k := range 3 {
		b.Set([]byte(fmt.Sprintf("b%04d/%d", i, k)), []byte(fmt.Sprint(i)))
	}
	return b
}

// TestCrashCloneKeepsSyncedPrefix writes batches, some synced, takes crash
// clones of the file system (keeping a seeded share of unsynced data) and
// checks after reopening: every batch up to the last synced one survives,
// each batch is whole or absent, and the survivors form a prefix.
func TestCrashCloneKeepsSyncedPrefix(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 7))
		fs := vfs.NewCrashableMem()
		s := open(t, fs)
		lastSynced := -1
		const n = 60
		for i := range n {
			sync := rng.IntN(4) == 0
			if err := s.Apply(batchOf(i), sync); err != nil {
				t.Fatal(err)
			}
			if sync {
				lastSynced = i
			}
		}
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rng})
		_ = s.Close()
		r := open(t, crashed)
		present := -1
		for i := range n {
			got := 0
			for k := range 3 {
				if _, ok, err := r.Get([]byte(fmt.Sprintf("b%04d/%d", i, k))); err != nil {
					t.Fatal(err)
				} else if ok {
					got++
				}
			}
			switch {
			case got != 0 && got != 3:
				t.Fatalf("seed %d: batch %d torn: %d of 3 keys", seed, i, got)
			case got == 3 && present != i-1:
				t.Fatalf("seed %d: batch %d survived without batch %d", seed, i, present+1)
			case got == 3:
				present = i
			}
		}
		if present < lastSynced {
			t.Fatalf("seed %d: synced batch %d lost (survivors end at %d)", seed, lastSynced, present)
		}
		t.Logf("seed %d: last synced %d, survived through %d", seed, lastSynced, present)
		_ = r.Close()
	}
}

// TestMatchesMemstore applies the same random batches (sets, deletes,
// range deletes) to Pebble and to memstore and compares full scans and
// point reads.
func TestMatchesMemstore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := open(t, vfs.NewMem())
	defer p.Close()
	m := memstore.New()
	key := func() []byte { return []byte(fmt.Sprintf("k%02d", rng.IntN(40))) }
	for range 300 {
		b := &durable.Batch{}
		for range 1 + rng.IntN(4) {
			switch rng.IntN(5) {
			case 0:
				b.Delete(key())
			case 1:
				lo, hi := key(), key()
				if bytes.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
				b.DeleteRange(lo, hi)
			default:
				b.Set(key(), []byte(fmt.Sprint(rng.IntN(1000))))
			}
		}
		sync := rng.IntN(2) == 0
		if err := p.Apply(b, sync); err != nil {
			t.Fatal(err)
		}
		_ = m.Apply(b, sync)
		lo, hi := key(), []byte("k99")
		if got, want := dump(t, p, lo, hi), dump(t, m, lo, hi); got != want {
			t.Fatalf("scan from %s:\npebble   %s\nmemstore %s", lo, got, want)
		}
		k := key()
		pv, pok, _ := p.Get(k)
		mv, mok, _ := m.Get(k)
		if pok != mok || !bytes.Equal(pv, mv) {
			t.Fatalf("get %s: pebble %q %v, memstore %q %v", k, pv, pok, mv, mok)
		}
	}
}

func dump(t *testing.T, s durable.Store, lo, hi []byte) string {
	var b bytes.Buffer
	if err := s.Scan(lo, hi, func(k, v []byte) bool {
		fmt.Fprintf(&b, "%s=%s ", k, v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPubendRecoversFromCrashClone runs a pubend on Pebble, crashes the
// file system after its synced group commits, and checks that the
// recovered pubend keeps every acknowledged event, refuses nothing it
// acknowledged, and never reuses an announced tick.
func TestPubendRecoversFromCrashClone(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st := open(t, fs)
	cfg := durable.PubendConfig{ID: "p", Node: "phb", Downstream: []string{"r"}}
	p, err := durable.NewPubend(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	acked := map[uint64]durable.Tick{}
	for seq := uint64(1); seq <= 20; seq++ {
		ev := match.MustEvent(match.Attr{Name: "n", Value: match.Int(int64(seq))})
		if err := p.Step(durable.Tick(1000*seq), durable.Envelope{From: "pub", To: "phb",
			Msg: durable.Msg{Kind: durable.MsgPublish, Publisher: "pub", Seq: seq, Event: ev}}); err != nil {
			t.Fatal(err)
		}
		if seq%3 != 0 {
			continue // group commit: several publishes per Ready
		}
		rd := p.Ready()
		if err := st.Apply(rd.Writes, rd.Sync); err != nil {
			t.Fatal(err)
		}
		for _, e := range rd.Msgs {
			if e.Msg.Kind == durable.MsgPubAck {
				acked[e.Msg.Seq] = e.Msg.Tick
			}
		}
	}
	announced := p.LastAnnounced()
	// Publishes 19 and 20 were never made durable: the crash may lose them.
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	_ = st.Close()
	st2 := open(t, crashed)
	defer st2.Close()
	p2, err := durable.NewPubend(cfg, st2)
	if err != nil {
		t.Fatal(err)
	}
	if p2.LastAnnounced() < announced {
		t.Fatalf("restart at %d below the announced tick %d", p2.LastAnnounced(), announced)
	}
	for seq, tick := range acked {
		v, ok, err := st2.Get(append(durable.PHBLogPrefix("p"), be(uint64(tick))...))
		if err != nil || !ok {
			t.Fatalf("acknowledged seq %d (tick %d) lost: %v", seq, tick, err)
		}
		if _, s, _, err := durable.DecodeLogRecord(v); err != nil || s != seq {
			t.Fatalf("tick %d holds seq %d, want %d (%v)", tick, s, seq, err)
		}
	}
	// hello answers the highest durable sequence: 18.
	if err := p2.Step(30_000, durable.Envelope{From: "pub", To: "phb", Msg: durable.Msg{Kind: durable.MsgHello, Publisher: "pub"}}); err != nil {
		t.Fatal(err)
	}
	rd := p2.Ready()
	if len(rd.Msgs) != 1 || rd.Msgs[0].Msg.Seq != 18 {
		t.Fatalf("hello after crash: %v", rd.Msgs)
	}
}

func be(v uint64) []byte {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}
