package bench

import (
	"bytes"
	"slices"
	"testing"
)

// TestPairedRatio: run i is paired with run i, pairs with a value that is
// not positive are left out, the median is over the rest, and no usable
// pair means no ratio.
func TestPairedRatio(t *testing.T) {
	r, ok := PairedRatio("m", "sift", "peer", []float64{10, 0, 30, 8, 5}, []float64{5, 4, 10, 2})
	if !ok || !slices.Equal(r.PerRun, []float64{2, 3, 4}) || r.Median != 3 || r.Sift != "sift" || r.Peer != "peer" || r.Measure != "m" {
		t.Fatalf("ratio %+v ok %v", r, ok)
	}
	if _, ok := PairedRatio("m", "s", "p", []float64{1, 2}, []float64{0, -1}); ok {
		t.Fatal("a ratio from no usable pair")
	}
}

func TestRunsOfAndMedianOf(t *testing.T) {
	type res struct {
		RunID
		v float64
	}
	r := func(sys string, n int, v float64) res { return res{RunID{System: sys, Run: n}, v} }
	rs := []res{r("a", 1, 1), r("b", 1, 10), r("a", 2, 3), r("b", 2, 20), r("a", 3, 2)}
	a := RunsOf(rs, "a")
	if !slices.Equal(a, []res{r("a", 1, 1), r("a", 2, 3), r("a", 3, 2)}) {
		t.Fatalf("RunsOf %v", a)
	}
	if m := MedianOf(a, func(r res) float64 { return r.v }); m != 2 {
		t.Fatalf("MedianOf %v", m)
	}
}

// TestWriteRatios pins the text layout of the ratios both benchmark
// tables end with.
func TestWriteRatios(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRatios(&b, nil); err != nil || b.Len() != 0 {
		t.Fatalf("no ratios wrote %q", b.String())
	}
	met, notMet := true, false
	rs := []Ratio{
		{Measure: "throughput", Sift: "sift-exact", Peer: "nats", Median: 0.2234, PerRun: []float64{0.2, 0.2234, 0.25}, Target: ">= 0.5x", Met: &notMet},
		{Measure: "bytes", Sift: "sift-exact", Peer: "nats-tls", Median: 12.5, PerRun: []float64{12.5}},
		{Measure: "cpu", Sift: "sift", Peer: "jetstream", Median: 1.5, PerRun: []float64{1.5, 1.5}, Target: ">= 1x", Met: &met},
	}
	if err := WriteRatios(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := "\nratios (Sift / peer; median of per-run ratios):\n" +
		"sift-exact / nats      throughput  0.223x  (runs: 0.2 0.223 0.25)  target >= 0.5x: NOT met\n" +
		"sift-exact / nats-tls  bytes       12.5x   (runs: 12.5)            \n" +
		"sift / jetstream       cpu         1.5x    (runs: 1.5 1.5)         target >= 1x: met\n"
	if b.String() != want {
		t.Fatalf("got:\n%q\nwant:\n%q", b.String(), want)
	}
}
