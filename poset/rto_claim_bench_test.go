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

// BenchmarkRTOClaim measures claimed placement (poset/rto_claim.go) on the
// nested (covering-heavy) workload in the shallow forest, the router's
// default table, against the router's local insert into the same
// structure: router CPU per insert by thread clock, and covering tests.
// Each iteration inserts and deletes one spare filter four ways, in turn,
// so that the modes share the load: local (Add), honest (the claimed
// parent is the first of the n subscriptions that covers the filter, or
// no claim when none does: then a local insert), lying (every claim names
// a subscription that does not cover the filter, of the filter's symbol
// when there is one, so the cheap checks do not refuse it for free) and
// mixed (honest and lying in turn). The modes' order rotates from one
// iteration to the next, so that none always finds the caches warmed by
// another's insert of the same filter. The clients' search for a parent
// runs before the timer. Caches: warm runs the inserts back to back (as a
// bulk subscribe does); cold runs a GC before each insert, outside the
// clock, as BenchmarkRTO's local mode does (a router that does other work
// between two installs). Metrics: <mode>-ns/insert, <mode>-tests/insert,
// <mode>/local (the CPU ratio), honest-placed (the share of honest claims
// placed). SIFT_BENCH_RTO_N sets the sizes (rtoSizes); classic and
// indexed are the structure without and with its roots' candidate index
// (the router's best local insert is the cheaper of the two).
func BenchmarkRTOClaim(b *testing.B) {
	for _, n := range rtoSizes(b) {
		for _, classic := range []bool{false, true} {
			for _, cold := range []bool{false, true} {
				name := map[bool]string{false: "indexed", true: "classic"}[classic]
				caches := map[bool]string{false: "warm", true: "cold"}[cold]
				b.Run(fmt.Sprintf("shallow/%s/%s/n=%d", name, caches, n), func(b *testing.B) {
					b.Cleanup(cpuclock.LockThread())
					bs := build(b, "shallow", classic, workloads[0], n)
					s := bs.s.(*poset.Shallow)
					honest, lies := claimsFor(bs)
					runClaimBench(b, s, bs, honest, lies, cold)
				})
			}
		}
	}
}

// noClaim marks a spare filter that no subscription covers: the honest
// client claims nothing and the router inserts it itself.
const noClaim = match.ID(1<<63 - 1)

// claimCache keeps the clients' claims per workload size: finding them
// scans the n filters for each spare one.
var claimCache = map[int][2][]match.ID{}

// claimsFor returns, for each spare filter, the honest claim (the first of
// the n subscriptions covering it, or noClaim) and a lie (the first that
// does not cover it, with the same symbol when it has one).
func claimsFor(bs *builtStructure) (honest, lies []match.ID) {
	if c, ok := claimCache[bs.n]; ok {
		return c[0], c[1]
	}
	fs := bs.w.Filters
	honest, lies = make([]match.ID, spare), make([]match.ID, spare)
	for j := range spare {
		f := fs[bs.n+j]
		honest[j], lies[j] = noClaim, noClaim
		sym, hasSym := symbolOf(f)
		for i := range bs.n {
			g := fs[i]
			covers := poset.Covers(g, f)
			if covers && honest[j] == noClaim {
				honest[j] = match.ID(i)
			}
			if !covers && lies[j] == noClaim {
				if s, ok := symbolOf(g); !hasSym || ok && s == sym {
					lies[j] = match.ID(i)
				}
			}
			if honest[j] != noClaim && lies[j] != noClaim {
				break
			}
		}
	}
	claimCache[bs.n] = [2][]match.ID{honest, lies}
	return honest, lies
}

// symbolOf returns the value of f's `symbol ==` constraint.
func symbolOf(f match.Filter) (string, bool) {
	for _, c := range f.Constraints() {
		if c.Attr == "symbol" && c.Op == match.OpEq {
			return c.Val.String(), true
		}
	}
	return "", false
}

func runClaimBench(b *testing.B, s *poset.Shallow, bs *builtStructure, honest, lies []match.ID, cold bool) {
	modes := []string{"local", "honest", "lying", "mixed"}
	cpu := make([]time.Duration, len(modes))
	tests := make([]uint64, len(modes))
	placed, claimed := 0, 0
	b.ResetTimer()
	for i := range b.N {
		j := i % spare
		id := match.ID(bs.n + j)
		f := bs.w.Filters[id]
		for k := range modes {
			m := (i + k) % len(modes)
			mode := modes[m]
			claim := honest[j]
			if mode == "lying" || mode == "mixed" && i%2 == 1 {
				claim = lies[j]
			}
			before := s.Counters().InsertTests
			var st poset.ClaimStats
			var err error
			if cold {
				runtime.GC()
			}
			t0 := cpuclock.Thread()
			if mode == "local" || claim == noClaim {
				err = s.Add(id, 0, f)
			} else {
				st, err = s.AddClaimed(id, 0, f, claim)
			}
			cpu[m] += cpuclock.Thread() - t0
			if err != nil {
				b.Fatal(err)
			}
			tests[m] += s.Counters().InsertTests - before
			if mode == "honest" && claim != noClaim {
				claimed++
				if st.Placed {
					placed++
				}
			}
			if mode == "lying" && st.Placed {
				b.Fatalf("a false claim (%d over %d) was placed", claim, id)
			}
			if err := s.Delete(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	for m, mode := range modes {
		b.ReportMetric(float64(cpu[m].Nanoseconds())/float64(b.N), mode+"-ns/insert")
		b.ReportMetric(float64(tests[m])/float64(b.N), mode+"-tests/insert")
		if m > 0 {
			b.ReportMetric(float64(cpu[m])/float64(cpu[0]), mode+"/local")
		}
	}
	b.ReportMetric(float64(placed)/float64(max(claimed, 1)), "honest-placed")
	b.ReportMetric(float64(claimed)/float64(b.N), "honest-claimed")
}
