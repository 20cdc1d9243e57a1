package bloomfwd

import (
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// stockSetup builds a first router's dictionary over n stock
// subscriptions and an inner router's trees holding them from one link.
func stockSetup(b *testing.B, n int, index string) (*Dict, *Trees, []match.Event) {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: n}, 1)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Index: index}
	d, err := NewDict(cfg)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := NewTrees(cfg)
	if err != nil {
		b.Fatal(err)
	}
	tr.LinkUp(1)
	r := &wire.Routes{Gen: 1, Seq: 1, Snapshot: true}
	for _, f := range w.Filters {
		d.AddFilter(f)
		r.Add = append(r.Add, f.String())
	}
	if err := tr.Routes(1, r); err != nil {
		b.Fatal(err)
	}
	return d, tr, w.Events
}

// BenchmarkSummarize is the first router's cost per event.
func BenchmarkSummarize(b *testing.B) {
	d, _, evs := stockSetup(b, 10000, IndexSBSTree)
	b.ResetTimer()
	for i := range b.N {
		d.Summarize(evs[i%len(evs)])
	}
}

// BenchmarkTreesRoute is an inner router's cost per event: the links a
// summary goes to (one link holding 10^4 stock filters).
func BenchmarkTreesRoute(b *testing.B) {
	for _, index := range []string{IndexSBSTree, IndexBFTree} {
		b.Run(index, func(b *testing.B) {
			d, tr, evs := stockSetup(b, 10000, index)
			sums := make([][]uint64, len(evs))
			for i, e := range evs {
				sums[i] = append([]uint64(nil), d.Summarize(e).Words...)
			}
			var to []mesh.Link
			b.ResetTimer()
			for i := range b.N {
				to, _ = tr.Route(sums[i%len(sums)], 0, to[:0])
			}
		})
	}
}

// BenchmarkInnerRouter compares an inner router's per-event decision with
// 10^4 stock filters held from its downstream link: exact mode decodes the
// event and asks the mesh's routing table; Bloom mode looks at the summary
// alone. It also reports the encoded summary's mean size.
func BenchmarkInnerRouter(b *testing.B) {
	d, tr, evs := stockSetup(b, 10000, IndexSBSTree)
	raws := make([][]byte, len(evs))
	sums := make([][]uint64, len(evs))
	entryBytes := 0
	for i, e := range evs {
		raws[i] = wire.AppendEvent(nil, e)
		sums[i] = append([]uint64(nil), d.Summarize(e).Words...)
		entryBytes += len(wire.AppendBloomEvent(nil, false, sums[i], raws[i])) - len(raws[i])
	}
	b.Run("exact", func(b *testing.B) {
		m := meshHolding(b)
		var dec wire.EventDecoder
		b.ResetTimer()
		for i := range b.N {
			e, err := dec.DecodeEvent(raws[i%len(raws)])
			if err != nil {
				b.Fatal(err)
			}
			m.Route(e, 0)
		}
	})
	for _, index := range []string{IndexSBSTree, IndexBFTree} {
		b.Run("bloom-"+index, func(b *testing.B) {
			if index != IndexSBSTree {
				_, tr, _ = stockSetup(b, 10000, index)
			}
			var to []mesh.Link
			b.ResetTimer()
			for i := range b.N {
				to, _ = tr.Route(sums[i%len(sums)], 0, to[:0])
			}
			b.ReportMetric(float64(entryBytes)/float64(len(evs)), "summary-bytes/event")
		})
	}
}

// meshHolding returns a mesh with one link whose peer forwarded the 10^4
// stock filters of the workload of stockSetup.
func meshHolding(b *testing.B) *mesh.Mesh {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: 10000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	m, err := mesh.New(mesh.Config{Name: "b"})
	if err != nil {
		b.Fatal(err)
	}
	peer, _ := mesh.New(mesh.Config{Name: "c"})
	id, _, err := m.LinkUp(peer.Hello())
	if err != nil {
		b.Fatal(err)
	}
	r := &wire.Routes{Gen: 1, Seq: 1, Snapshot: true}
	for _, f := range w.Filters {
		r.Add = append(r.Add, f.String())
	}
	if _, err := m.Receive(id, r); err != nil {
		b.Fatal(err)
	}
	return m
}
