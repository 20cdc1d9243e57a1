package bench

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

// Runs draws one line per system through its value in each run
// (perRun[i] holds system i's runs: X the run number, Y the value), to
// show the noise that alternating the systems averages out.
func (sp SystemPlots) Runs(title, unit string, perRun []plotter.XYs) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "run - " + sp.Label
	p.Y.Label.Text = unit
	var args []any
	for i, sys := range sp.Systems {
		args = append(args, sys, perRun[i])
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, fmt.Errorf("plot runs: %w", err)
	}
	p.Y.Min = 0
	return p, nil
}

// RunPoints returns, for each of systems, the points (run number,
// value(result)) of its results, for Runs.
func RunPoints[R RunResult](systems []string, results []R, value func(R) float64) []plotter.XYs {
	out := make([]plotter.XYs, len(systems))
	for i, sys := range systems {
		for _, r := range RunsOf(results, sys) {
			out[i] = append(out[i], plotter.XY{X: float64(r.RunNumber()), Y: value(r)})
		}
	}
	return out
}

// PacedLatency draws each system's paced p50, p99 and p999 (in
// microseconds; q[i] holds system i's three).
func (sp SystemPlots) PacedLatency(title string, q [][3]float64) (*plot.Plot, error) {
	qs := make([][]float64, 3)
	for _, s := range q {
		qs[0], qs[1], qs[2] = append(qs[0], s[0]), append(qs[1], s[1]), append(qs[2], s[2])
	}
	return sp.Latency(title, []string{"p50", "p99", "p999"}, qs)
}
