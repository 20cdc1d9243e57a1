package core

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/mesh"
)

// BenchmarkHeldFilters measures what an upstream router holds per filter
// a link forwarded to it: one core (shallow table, as siftd's default)
// receives SIFT_BENCH_HELD_N (default 10^4) distinct filters `k == "vI"`
// (nothing covers anything, so every one is held apart) from one link, in
// Routes parts of 2,000 filters (the first a snapshot, as a resync's
// stream), then its live heap above the empty core's is reported per
// filter (heap-B/filter), with the receiving CPU time per filter (the
// benchmark's ns/op is one whole receive). In forward=relay, a second
// link is up (connection 2, to a peer that sends nothing), and the core
// forwards every filter there, as a router between two others does.
// SIFT_BENCH_HELD_HEAPPROFILE names a file for a heap profile taken while
// the core holds everything (go tool pprof -sample_index inuse_space).
func BenchmarkHeldFilters(b *testing.B) {
	n := 10_000
	if s := os.Getenv("SIFT_BENCH_HELD_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf(`k == "v%d"`, i)
	}
	for _, fwd := range []string{"exact", "bloom", "relay"} {
		b.Run("forward="+fwd, func(b *testing.B) {
			for b.Loop() {
				benchHeld(b, fwd == "bloom", fwd == "relay", texts)
			}
		})
	}
	b.Run("need", func(b *testing.B) {
		for b.Loop() {
			benchNeed(b, texts)
		}
	})
}

// benchNeed measures what the same filters need, the measure of the
// issue's "upstream routers holding at most 2x what the filters they were
// forwarded need": each filter parsed (compacted, as the router keeps
// it: the router must have it to forward it on and to send it again when
// a link resynchronises), and an entry in the exact index that says which
// of them an event matches (match.Fast, inserted one by one as a link's
// filters arrive); nothing else (no text, no witness, no routing table, no
// record of which link holds what). Reported as need-B/filter, the live
// heap above the empty index per filter.
func benchNeed(b *testing.B, texts []string) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	idx := match.NewFast(match.FastConfig{})
	fs := make([]match.Filter, len(texts))
	for i, text := range texts {
		f, err := match.ParseCompact(text)
		if err != nil {
			b.Fatal(err)
		}
		if err := idx.Insert(match.ID(i+1), f); err != nil {
			b.Fatal(err)
		}
		fs[i] = f
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if idx.Len() != len(texts) {
		b.Fatalf("the index holds %d filters, want %d", idx.Len(), len(texts))
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(texts)), "need-B/filter")
	runtime.KeepAlive(idx)
	runtime.KeepAlive(fs)
}

func benchHeld(b *testing.B, bloomMode, relay bool, texts []string) {
	c, m := newHeldCore(b, bloomMode, relay)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const part = 2000
	for seq, lo := uint64(1), 0; lo < len(texts); seq, lo = seq+1, lo+part {
		r := &wire.Routes{Gen: 1, Seq: seq, Snapshot: lo == 0, Add: texts[lo:min(lo+part, len(texts))]}
		stepHeld(b, c, LinkFrame{Conn: 1, Msg: r})
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	links := 1
	if relay {
		links = 2
	}
	if rc := m.RouteCounts(); len(rc) != links || rc[0].ReceivedCount != len(texts) || c.lt.Len() != len(texts) {
		b.Fatalf("the core holds %+v filters from the links, its link table %d, want %d from the first", rc, c.lt.Len(), len(texts))
	}
	if rc := m.RouteCounts(); relay && rc[1].ForwardedCount != len(texts) {
		b.Fatalf("the core forwards %d filters to the second link, want %d", rc[1].ForwardedCount, len(texts))
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(texts)), "heap-B/filter")
	if p := os.Getenv("SIFT_BENCH_HELD_HEAPPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(m)
}

// newHeldCore returns a core with one link up (connection 1) to a peer
// that sends nothing yet, and with relay a second (connection 2) to a
// peer that sends nothing.
func newHeldCore(b *testing.B, bloomMode, relay bool) (*Core, *mesh.Mesh) {
	m, err := mesh.New(mesh.Config{Name: "up", MaxLinks: 4, Incarnation: 1, Table: "shallow"})
	if err != nil {
		b.Fatal(err)
	}
	peer, err := mesh.New(mesh.Config{Name: "down", MaxLinks: 4, Incarnation: 2, Table: "shallow"})
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Mesh: m, Engine: NewEngine(match.NewFast(match.FastConfig{}), 0)}
	if bloomMode {
		cfg.Bloom = &bloomfwd.Config{}
	}
	c, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	h := peer.Hello()
	if bloomMode {
		h.Bloom = bloomfwd.WireParams(cfg.Bloom.Params.Resolved())
	}
	stepHeld(b, c, LinkUp{Conn: 1, Hello: h, SendHello: true})
	if relay {
		other, err := mesh.New(mesh.Config{Name: "other", MaxLinks: 4, Incarnation: 3, Table: "shallow"})
		if err != nil {
			b.Fatal(err)
		}
		stepHeld(b, c, LinkUp{Conn: 2, Hello: other.Hello(), SendHello: true})
	}
	return c, m
}

// stepHeld steps c and drops what it sends (the peer is not simulated).
func stepHeld(b *testing.B, c *Core, in Input) {
	if err := c.Step(in); err != nil {
		b.Fatal(err)
	}
	for c.HasReady() {
		if rd := c.Ready(); len(rd.Close) > 0 {
			b.Fatalf("the core closed connection %d: %s", rd.Close[0].Conn, rd.Close[0].Reason)
		}
		c.Advance()
	}
}
