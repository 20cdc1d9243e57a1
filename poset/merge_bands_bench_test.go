package poset

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// BenchmarkMergerBands is the merger's hard case: n touching price bands
// [i, i+1) of one symbol, added in a seeded random order (they end as a
// few long merged bands, each standing for many sources, all in one
// candidate-index bucket and one merge group), then a tenth removed. One
// op is the whole sequence; ns/add and ns/remove are thread CPU time per
// operation.
func BenchmarkMergerBands(b *testing.B) {
	for _, n := range []int{1_000, 4_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			fs := make([]match.Filter, n)
			for i := range fs {
				fs[i] = match.MustFilter(
					match.Constraint{Attr: "symbol", Op: match.OpEq, Val: match.Str("ACME")},
					match.Constraint{Attr: "price", Op: match.OpGe, Val: match.Int(int64(i))},
					match.Constraint{Attr: "price", Op: match.OpLt, Val: match.Int(int64(i + 1))})
			}
			rand.New(rand.NewPCG(1, 1)).Shuffle(n, func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
			BenchPhases(b, n, "ns/add", n/10, "ns/remove", func() (func(), func()) {
				m := newMerger()
				add := func() {
					for _, f := range fs {
						m.add(f)
						m.flush()
					}
				}
				remove := func() {
					for _, f := range fs[:n/10] {
						m.remove(f)
						m.flush()
					}
				}
				return add, remove
			})
		})
	}
}
