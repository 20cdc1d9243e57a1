package baselinetest

import (
	"testing"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// BenchmarkHEM measures Match on the default HEM workload (20 attributes,
// 10 ranges of width 0.3 per subscription) with subs subscriptions,
// reporting matches per event; the build is not timed.
func BenchmarkHEM(b *testing.B, subs int, newIndex func() match.Index) {
	w, err := workload.HEM(workload.HEMConfig{Subscriptions: subs, Events: 200}, 1)
	if err != nil {
		b.Fatal(err)
	}
	idx := newIndex()
	ids := make([]match.ID, len(w.Filters))
	for i := range ids {
		ids[i] = match.ID(i)
	}
	if err := match.Load(idx, ids, w.Filters); err != nil {
		b.Fatal(err)
	}
	dst := idx.Match(w.Events[0], nil) // settles lazily sorted structures
	total := 0
	b.ResetTimer()
	for i := range b.N {
		dst = idx.Match(w.Events[i%len(w.Events)], dst[:0])
		total += len(dst)
	}
	b.ReportMetric(float64(total)/float64(b.N), "matches/event")
}
