package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Ratio compares a Sift system with a peer system on one measure: the
// median over runs of the per-run ratio (runs alternate, so each ratio
// compares runs made under about the same load). Target is the bound an
// issue sets; Met says whether the median meets it (nil: no target).
type Ratio struct {
	Measure string    `json:"measure"`
	Sift    string    `json:"sift"`
	Peer    string    `json:"peer"`
	Median  float64   `json:"median"`
	PerRun  []float64 `json:"per_run"`
	Target  string    `json:"target,omitempty"`
	Met     *bool     `json:"met,omitempty"`
}

// PairedRatio pairs run i of sift (sift[i], a measure's value in it) with
// run i of peer, keeps the ratios of pairs where both values are positive
// and returns their median; ok is false when no pair has both.
func PairedRatio(measure, siftName, peerName string, sift, peer []float64) (r Ratio, ok bool) {
	r = Ratio{Measure: measure, Sift: siftName, Peer: peerName}
	for i := range min(len(sift), len(peer)) {
		if x, y := sift[i], peer[i]; x > 0 && y > 0 {
			r.PerRun = append(r.PerRun, x/y)
		}
	}
	if len(r.PerRun) == 0 {
		return r, false
	}
	r.Median = Median(r.PerRun)
	return r, true
}

// Values returns f of each run, in order.
func Values[R any](runs []R, f func(R) float64) []float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = f(r)
	}
	return xs
}

// MedianOf returns the median of f over the runs.
func MedianOf[R any](runs []R, f func(R) float64) float64 { return Median(Values(runs, f)) }

// WriteRatios writes the ratios as aligned text under a heading, one line
// each with its per-run values and, where it has a target, the verdict.
// It writes nothing for no ratios.
func WriteRatios(w io.Writer, rs []Ratio) error {
	if len(rs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nratios (Sift / peer; median of per-run ratios):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rs {
		verdict := ""
		if r.Met != nil {
			verdict = "target " + r.Target + ": " + map[bool]string{true: "met", false: "NOT met"}[*r.Met]
		}
		fmt.Fprintf(tw, "%s / %s\t%s\t%.3gx\t(runs: %s)\t%s\n", r.Sift, r.Peer, r.Measure, r.Median, floats(r.PerRun), verdict)
	}
	return tw.Flush()
}

func floats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'g', 3, 64)
	}
	return strings.Join(parts, " ")
}
