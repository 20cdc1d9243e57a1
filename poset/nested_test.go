package poset_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// nestedWorkload is the covering-heavy workload the issue asks for, which
// bench/workload does not have: a few broad filters covering many narrow
// ones. Over 50 symbols: 2% `symbol == X`, 3% symbol-less price ranges,
// and 95% `symbol == X && price >= c-w && price <= c+w` with c uniform in
// [0, 1000) and w log-uniform in [0.5, 500], so ranges nest often. Events
// are trades with a symbol and a price. Seeded (benchSeed), deterministic.
func nestedWorkload(n int) workload.Workload {
	r := rand.New(rand.NewPCG(benchSeed, 11))
	const symbols = 50
	sym := func() match.Constraint {
		return match.Constraint{Attr: "symbol", Op: match.OpEq, Val: match.Str(fmt.Sprintf("S%02d", r.IntN(symbols)))}
	}
	rng := func(c, w float64) []match.Constraint {
		lo, hi := math.Round((c-w)*100)/100, math.Round((c+w)*100)/100
		return []match.Constraint{
			{Attr: "price", Op: match.OpGe, Val: match.MustFloat(lo)},
			{Attr: "price", Op: match.OpLe, Val: match.MustFloat(hi)},
		}
	}
	width := func() float64 { return 0.5 * math.Pow(1000, r.Float64()) }
	var w workload.Workload
	for range n {
		var cs []match.Constraint
		switch k := r.IntN(100); {
		case k < 2:
			cs = []match.Constraint{sym()}
		case k < 5:
			cs = rng(1000*r.Float64(), 100+400*r.Float64())
		default:
			cs = append(rng(1000*r.Float64(), width()), sym())
		}
		w.Filters = append(w.Filters, match.MustFilter(cs...))
	}
	for range 200 {
		w.Events = append(w.Events, match.MustEvent(
			match.Attr{Name: "symbol", Value: match.Str(fmt.Sprintf("S%02d", r.IntN(symbols)))},
			match.Attr{Name: "price", Value: match.MustFloat(math.Round(r.Float64()*100000) / 100)},
		))
	}
	return w
}
