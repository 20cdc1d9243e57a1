package poset_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// BenchmarkRTO measures the router's side of an offloaded insert on the
// nested (covering-heavy) workload: CPU time in StartRTO and Answer (vector
// building, combining answers, placement, verification) and in encoding
// every query to its wire form (Query.AppendWire, once per query whatever
// the number of clients); the clients' work is excluded. Also bytes
// exchanged with all clients, and covering tests done by the router;
// against a local insert into the same structure.
func BenchmarkRTO(b *testing.B) {
	type mode struct {
		name  string
		local bool
		cfg   poset.RTOConfig
	}
	modes := []mode{
		{name: "local", local: true},
		{name: "trust", cfg: poset.RTOConfig{Policy: poset.Trust}},
		{name: "verify", cfg: poset.RTOConfig{Policy: poset.Verify}},
		{name: "majority-k1", cfg: poset.RTOConfig{Policy: poset.Majority, Clients: 1}},
		{name: "majority-k3", cfg: poset.RTOConfig{Policy: poset.Majority, Clients: 3}},
		{name: "majority-k5", cfg: poset.RTOConfig{Policy: poset.Majority, Clients: 5}},
	}
	for _, n := range []int{1000, 10000} {
		for _, kind := range []string{"poset", "forest"} {
			for _, classic := range []bool{true, false} {
				for _, m := range modes {
					if !classic && !m.local {
						continue // placement from answers does not use the index
					}
					name := m.name
					if m.local && !classic {
						name = "local-indexed"
					}
					b.Run(fmt.Sprintf("%s/%s/n=%d", kind, name, n), func(b *testing.B) {
						b.Cleanup(cpuclock.LockThread())
						bs := build(b, kind, classic, workloads[0], n)
						runRTOBench(b, bs, m.local, m.cfg)
					})
				}
			}
		}
	}
}

func runRTOBench(b *testing.B, bs *builtStructure, local bool, cfg poset.RTOConfig) {
	s := bs.s
	s.ResetCounters()
	var router time.Duration
	var bytes, fallbacks, rounds, touched int
	b.ResetTimer()
	for i := range b.N {
		id := match.ID(bs.n + i%spare)
		f := bs.w.Filters[id]
		if local {
			runtime.GC() // as before each router step of RTO (see placeRTO)
			t0 := cpuclock.Thread()
			if err := s.Insert(id, f); err != nil {
				b.Fatal(err)
			}
			router += cpuclock.Thread() - t0
		} else {
			st, d := placeRTO(b, s, id, f, cfg)
			router += d
			bytes += st.BytesOut + st.BytesIn
			rounds += st.Rounds
			touched += st.Touched
			if st.Fallback {
				fallbacks++
			}
		}
		if err := s.Delete(id); err != nil {
			b.Fatal(err)
		}
	}
	k := s.Counters()
	b.ReportMetric(float64(router.Nanoseconds())/float64(b.N), "router-ns/insert")
	b.ReportMetric(float64(k.InsertTests)/float64(k.Inserts), "router-tests/insert")
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/insert")
	b.ReportMetric(float64(rounds)/float64(b.N), "rounds/insert")
	b.ReportMetric(float64(fallbacks)/float64(b.N), "fallbacks/insert")
	b.ReportMetric(float64(touched)/float64(b.N), "touched/insert")
}

// placeRTO runs one offloaded insertion with honest clients and returns its
// stats and the router's CPU time (client evaluation excluded). The clients
// run in this process and allocate much; a GC before each router step
// keeps their garbage from being charged to the router as GC assists.
func placeRTO(b *testing.B, s structure, id match.ID, f match.Filter, cfg poset.RTOConfig) (poset.RTOStats, time.Duration) {
	runtime.GC()
	t0 := cpuclock.Thread()
	p, err := s.StartRTO(id, 0, f, cfg)
	if err != nil {
		b.Fatal(err)
	}
	wire = encodeQueries(p.Queries(), wire)
	d := cpuclock.Thread() - t0
	for !p.Done() {
		qs := p.Queries()
		answers := make([][]poset.Answer, len(qs))
		for qi, q := range qs {
			a := poset.Evaluate(q)
			for range p.Clients() {
				answers[qi] = append(answers[qi], a)
			}
		}
		runtime.GC()
		t1 := cpuclock.Thread()
		if _, err := p.Answer(answers); err != nil {
			b.Fatal(err)
		}
		wire = encodeQueries(p.Queries(), wire)
		d += cpuclock.Thread() - t1
	}
	return p.Stats(), d
}

// wire is the router's send buffer, reused as a router would.
var wire []byte

// encodeQueries is the router's part of sending queries: each encoded
// once (the same bytes go to every client asked).
func encodeQueries(qs []poset.Query, buf []byte) []byte {
	for _, q := range qs {
		buf = q.AppendWire(buf[:0])
	}
	return buf
}

// BenchmarkFF measures inserts through FF on the nested workload, with the
// 50 `symbol == X` filters published as fixed filters, under Verify: the
// router's CPU per insert and its covering tests, against a local insert
// into the same (pinned) structure.
func BenchmarkFF(b *testing.B) {
	var fixed []match.Filter
	for i := range 50 {
		fixed = append(fixed, match.MustParse(fmt.Sprintf("symbol == \"S%02d\"", i)))
	}
	for _, n := range []int{1000, 10000} {
		for _, kind := range []string{"poset", "forest"} {
			w := workloads[0].gen(n)
			s := newStructure(kind, true)
			if err := s.Pin(fixed); err != nil {
				b.Fatal(err)
			}
			for i := range n {
				s.Insert(match.ID(i), w.Filters[i])
			}
			for _, ff := range []bool{false, true} {
				name := map[bool]string{false: "local", true: "ff-verify"}[ff]
				b.Run(fmt.Sprintf("%s/%s/n=%d", kind, name, n), func(b *testing.B) {
					b.Cleanup(cpuclock.LockThread())
					s.ResetCounters()
					var router time.Duration
					fallbacks := 0
					b.ResetTimer()
					for i := range b.N {
						id := match.ID(n + i%spare)
						f := w.Filters[id]
						claim := poset.FixedCovering(fixed, f) // the client's work
						t0 := cpuclock.Thread()
						if ff {
							st, err := s.AddFF(id, 0, f, []poset.Bits{claim}, poset.Verify)
							if err != nil {
								b.Fatal(err)
							}
							if st.Fallback {
								fallbacks++
							}
						} else if err := s.Insert(id, f); err != nil {
							b.Fatal(err)
						}
						router += cpuclock.Thread() - t0
						s.Delete(id)
					}
					k := s.Counters()
					b.ReportMetric(float64(router.Nanoseconds())/float64(b.N), "router-ns/insert")
					b.ReportMetric(float64(k.InsertTests)/float64(k.Inserts), "router-tests/insert")
					b.ReportMetric(float64(fallbacks)/float64(b.N), "no-claim/insert")
				})
			}
		}
	}
}
