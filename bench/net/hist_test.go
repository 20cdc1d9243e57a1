package netbench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestHistogramQuantiles compares quantiles with the exact ones of the
// sorted samples: within the bucket resolution (1/32).
func TestHistogramQuantiles(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	var h Histogram
	var xs []time.Duration
	for range 20000 {
		d := time.Duration(r.ExpFloat64() * float64(200*time.Microsecond))
		h.Record(d)
		xs = append(xs, d)
	}
	slices.Sort(xs)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
		exact := xs[min(len(xs)-1, int(q*float64(len(xs))+0.5)-1)]
		got := h.Quantile(q)
		if diff := float64(got-exact) / float64(exact); diff > 1.0/16 || diff < -1.0/16 {
			t.Errorf("q%v: got %v, exact %v", q, got, exact)
		}
	}
	if h.Max() != xs[len(xs)-1] || h.Count() != uint64(len(xs)) {
		t.Errorf("max %v count %d", h.Max(), h.Count())
	}
}

func TestHistogramBuckets(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 31, 32, 33, 63, 64, 1000, time.Second, time.Hour, 1 << 62} {
		i := bucketOf(d)
		if lo, hi := lowerBound(i), lowerBound(i+1); d < lo || d >= hi {
			t.Errorf("%d in bucket %d = [%d, %d)", d, i, lo, hi)
		}
	}
	var a, b Histogram
	a.Record(time.Millisecond)
	b.Record(3 * time.Millisecond)
	a.Merge(&b)
	if a.Count() != 2 || a.Max() != 3*time.Millisecond || a.Quantile(0.5) > 1100*time.Microsecond {
		t.Errorf("merged: count %d max %v p50 %v", a.Count(), a.Max(), a.Quantile(0.5))
	}
	var empty Histogram
	if empty.Quantile(0.99) != 0 {
		t.Error("empty histogram has a quantile")
	}
}
