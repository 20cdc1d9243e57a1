package router

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestLatencyHistogramMatchesPrometheus feeds the same observations, some
// as runs through observeN, to the writers' histogram and to a standard
// Prometheus histogram with the same buckets: the exported buckets, count
// and sum agree, and the metric registers and gathers as a histogram.
func TestLatencyHistogramMatchesPrometheus(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	buckets := prometheus.ExponentialBuckets(10e-6, 2, 18)
	ours := newLatencyHistogram("x_seconds", "test", buckets)
	ref := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x_seconds", Help: "test", Buckets: buckets})
	for range 2000 {
		v := math.Exp(rng.Float64()*16-12) + float64(rng.IntN(2))*buckets[rng.IntN(len(buckets))] // bucket bounds too
		n := uint64(1 + rng.IntN(5))
		if n == 1 {
			ours.Observe(v)
		} else {
			ours.observeN(v, n)
		}
		for range n {
			ref.Observe(v)
		}
	}
	var got, want dto.Metric
	if err := ours.Write(&got); err != nil {
		t.Fatal(err)
	}
	if err := ref.Write(&want); err != nil {
		t.Fatal(err)
	}
	g, w := got.GetHistogram(), want.GetHistogram()
	if g.GetSampleCount() != w.GetSampleCount() {
		t.Fatalf("count %d, want %d", g.GetSampleCount(), w.GetSampleCount())
	}
	if d := math.Abs(g.GetSampleSum() - w.GetSampleSum()); d > 1e-9*math.Abs(w.GetSampleSum()) {
		t.Fatalf("sum %v, want %v", g.GetSampleSum(), w.GetSampleSum())
	}
	if len(g.GetBucket()) != len(w.GetBucket()) {
		t.Fatalf("%d buckets, want %d", len(g.GetBucket()), len(w.GetBucket()))
	}
	for i, b := range w.GetBucket() {
		if gb := g.GetBucket()[i]; gb.GetUpperBound() != b.GetUpperBound() || gb.GetCumulativeCount() != b.GetCumulativeCount() {
			t.Fatalf("bucket %d: le %v count %d, want le %v count %d", i, gb.GetUpperBound(), gb.GetCumulativeCount(), b.GetUpperBound(), b.GetCumulativeCount())
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(ours)
	fams, err := reg.Gather()
	if err != nil || len(fams) != 1 || fams[0].GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("gather: %v %v", fams, err)
	}
}
