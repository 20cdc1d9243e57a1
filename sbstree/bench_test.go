package sbstree

import (
	"testing"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match/bloom"
)

// BenchmarkInsertDelete is one insert and one delete per op: the stock
// workload's 10^4 filters (default parameters) inserted into a tree
// holding them all, each then deleted again, in turn.
func BenchmarkInsertDelete(b *testing.B) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 10_000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	p := bloom.Params{}.Resolved()
	tr, _ := New(int(p.M))
	fs := make([]*bitset.BitSet, len(w.Filters))
	for i, f := range w.Filters {
		fs[i] = p.Encode(f)
		tr.Insert(fs[i], uint64(i))
	}
	i := 0
	for b.Loop() {
		s := fs[i%len(fs)]
		if err := tr.Delete(s, uint64(i%len(fs))); err != nil {
			b.Fatal(err)
		}
		tr.Insert(s, uint64(i%len(fs)))
		i++
	}
}
