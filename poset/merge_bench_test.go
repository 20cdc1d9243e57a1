package poset_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/poset"
)

// BenchmarkTableMerge subscribes n stock filters (workload.Stock, seed 1)
// from one client to a table with one neighbour, without and with perfect merging,
// then unsubscribes them all in a seeded random order. One op is the whole
// sequence; ns/sub and ns/unsub report the thread CPU time per operation.
func BenchmarkTableMerge(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		for _, merge := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/merge=%v", n, merge), func(b *testing.B) {
				w, err := workload.Stock(workload.StockConfig{Subscriptions: n, Events: 1}, 1)
				if err != nil {
					b.Fatal(err)
				}
				order := rand.New(rand.NewPCG(1, 2)).Perm(n)
				poset.BenchPhases(b, n, "ns/sub", n, "ns/unsub", func() (func(), func()) {
					tab, err := poset.NewTable(poset.TableConfig{Neighbours: []poset.Iface{1}, Merge: merge})
					if err != nil {
						b.Fatal(err)
					}
					sub := func() {
						for _, f := range w.Filters {
							if _, err := tab.Subscribe(0, f); err != nil {
								b.Fatal(err)
							}
						}
					}
					unsub := func() {
						for _, i := range order {
							if _, err := tab.Unsubscribe(0, w.Filters[i]); err != nil {
								b.Fatal(err)
							}
						}
					}
					return sub, unsub
				})
			})
		}
	}
}
