package bloom_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/bftree"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/sbstree"
)

var benchStock = struct {
	sync.Mutex
	byN map[int]workload.Workload
}{byN: map[int]workload.Workload{}}

// stockWorkload returns the stock workload (seed 1, 1,000 events) with n
// subscriptions, generated once per process.
func stockWorkload(b *testing.B, n int) workload.Workload {
	benchStock.Lock()
	defer benchStock.Unlock()
	if w, ok := benchStock.byN[n]; ok {
		return w
	}
	w, err := workload.Stock(workload.StockConfig{Subscriptions: n}, 1)
	if err != nil {
		b.Fatal(err)
	}
	benchStock.byN[n] = w
	return w
}

func loaded(b *testing.B, idx match.Index, w workload.Workload) match.Index {
	ids := make([]match.ID, len(w.Filters))
	for i := range ids {
		ids[i] = match.ID(i)
	}
	if err := match.Load(idx, ids, w.Filters); err != nil {
		b.Fatal(err)
	}
	return idx
}

func benchIndexes(b *testing.B) map[string]func() match.Index {
	return map[string]func() match.Index{
		"fast": func() match.Index { idx, _ := match.NewIndex("fast"); return idx },
		"bftree": func() match.Index {
			idx, err := bftree.NewIndex(bftree.Config{})
			if err != nil {
				b.Fatal(err)
			}
			return idx
		},
		"sbstree": func() match.Index {
			idx, err := sbstree.NewIndex(bloom.Params{})
			if err != nil {
				b.Fatal(err)
			}
			return idx
		},
	}
}

// BenchmarkIndexMatch is one exact Match per op on the stock workload at
// the default parameters (Bloom indexes: summary, tree, exact re-check).
func BenchmarkIndexMatch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, name := range []string{"fast", "bftree", "sbstree"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				w := stockWorkload(b, n)
				idx := loaded(b, benchIndexes(b)[name](), w)
				var dst []match.ID
				i := 0
				for b.Loop() {
					dst = idx.Match(w.Events[i%len(w.Events)], dst[:0])
					i++
				}
			})
		}
	}
}

// BenchmarkTreeMatch is one tree lookup per op on precomputed summaries:
// the work of an inner router.
func BenchmarkTreeMatch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, name := range []string{"bftree", "sbstree"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				w := stockWorkload(b, n)
				idx := loaded(b, benchIndexes(b)[name](), w).(*bloom.Index)
				sums := make([]*bitset.BitSet, len(w.Events))
				for i, e := range w.Events {
					sums[i] = idx.Dictionary().Params().NewFilter()
					idx.Dictionary().Summary(e, sums[i])
				}
				var dst []uint64
				i := 0
				for b.Loop() {
					dst = idx.Tree().Match(sums[i%len(sums)], dst[:0])
					i++
				}
			})
		}
	}
}

// BenchmarkSummary is one event summary per op: the work of the first
// router.
func BenchmarkSummary(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			w := stockWorkload(b, n)
			d, err := bloom.NewDictionary(bloom.Params{})
			if err != nil {
				b.Fatal(err)
			}
			for _, f := range w.Filters {
				d.AddFilter(f)
			}
			sum := d.Params().NewFilter()
			i := 0
			for b.Loop() {
				d.Summary(w.Events[i%len(w.Events)], sum)
				i++
			}
		})
	}
}

// BenchmarkBFTreeParts is one bftree lookup per op on precomputed stock
// summaries, over the number of parts h at the default m and k.
func BenchmarkBFTreeParts(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, h := range []int{4, 8, 16, 32} {
			b.Run(fmt.Sprintf("n=%d/h=%d", n, h), func(b *testing.B) {
				w := stockWorkload(b, n)
				idx, err := bftree.NewIndex(bftree.Config{H: h})
				if err != nil {
					b.Fatal(err)
				}
				loaded(b, idx, w)
				sums := make([]*bitset.BitSet, len(w.Events))
				for i, e := range w.Events {
					sums[i] = idx.Dictionary().Params().NewFilter()
					idx.Dictionary().Summary(e, sums[i])
				}
				var dst []uint64
				i := 0
				for b.Loop() {
					dst = idx.Tree().Match(sums[i%len(sums)], dst[:0])
					i++
				}
			})
		}
	}
}
