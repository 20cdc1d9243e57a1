package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// metric extracts one plotted measure from a result; ok is false when the
// result lacks it.
type metric struct {
	file, title, unit string
	value             func(Result) (v float64, ok bool)
}

var (
	matchTime = metric{"match_time.png", "Mean match time per event", "microseconds",
		func(r Result) (float64, bool) { return r.MeanNs / 1e3, r.Measured() && r.MeanNs > 0 }}
	cpuTime = metric{"match_cpu.png", "CPU time per event (matching thread)", "microseconds",
		func(r Result) (float64, bool) { return r.CPUNs / 1e3, r.Measured() && r.CPUNs > 0 }}
	p99Time = metric{"match_p99.png", "99th percentile match time per event", "microseconds",
		func(r Result) (float64, bool) { return r.P99Ns / 1e3, r.Measured() && r.P99Ns > 0 }}
	memory = metric{"memory.png", "Live heap after build", "MB",
		func(r Result) (float64, bool) {
			return float64(r.HeapBytes) / (1 << 20), r.BuildSeconds > 0 && r.HeapBytes > 0
		}}
	buildTime = metric{"build_time.png", "Build time", "seconds",
		func(r Result) (float64, bool) { return r.BuildSeconds, r.BuildSeconds > 0 }}
)

// WritePlots writes PNG plots into dir: match time (mean wall-clock, CPU
// and p99 wall-clock), live
// heap and build time, each against the first swept knob (memory against
// subscriptions when they are swept), one line per structure, with log
// axes where values span a decade or more. Without a numeric sweep each
// plot shows one point per structure.
func (rep *Report) WritePlots(dir string) error {
	x := ""
	for _, sw := range rep.Sweeps {
		if numeric(sw.Values) {
			x = sw.Knob
			break
		}
	}
	memX := x
	for _, sw := range rep.Sweeps {
		if sw.Knob == "subs" && numeric(sw.Values) {
			memX = "subs"
		}
	}
	for _, m := range []struct {
		metric
		x string
	}{{matchTime, x}, {cpuTime, x}, {p99Time, x}, {memory, memX}, {buildTime, x}} {
		p, err := rep.plot(m.metric, m.x)
		if err != nil {
			return fmt.Errorf("plot %s: %w", m.file, err)
		}
		if err := p.Save(16*vg.Centimeter, 11*vg.Centimeter, filepath.Join(dir, m.file)); err != nil {
			return fmt.Errorf("plot %s: %w", m.file, err)
		}
	}
	return nil
}

func (rep *Report) plot(m metric, x string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (%s workload)", m.title, rep.Workload)
	p.Y.Label.Text = m.unit
	p.Legend.Top, p.Legend.Left = true, true
	if x == "" {
		return p, rep.dotPlot(p, m)
	}
	p.X.Label.Text = x
	series, order := rep.series(m, x)
	var args []any
	var all plotter.XYs
	for _, name := range order {
		args = append(args, name, series[name])
		all = append(all, series[name]...)
	}
	logAxes(p, all)
	if len(args) == 0 {
		return p, nil
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	legendRoom(p, all)
	return p, nil
}

// legendRoom raises the top of the y axis so the data fills about the
// lower 60% and the legend, top left, hides none of it.
func legendRoom(p *plot.Plot, xys plotter.XYs) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, xy := range xys {
		lo, hi = min(lo, xy.Y), max(hi, xy.Y)
	}
	if _, isLog := p.Y.Scale.(plot.LogScale); isLog {
		p.Y.Min, p.Y.Max = lo/1.5, hi*math.Pow(hi/lo, 0.7)*1.5
		return
	}
	p.Y.Min, p.Y.Max = min(0, lo), hi+0.7*(hi-min(0, lo))
}

// series groups results into one line per structure (and per value of
// the other swept knobs), in first-seen order.
func (rep *Report) series(m metric, x string) (map[string]plotter.XYs, []string) {
	series := make(map[string]plotter.XYs)
	var order []string
	for _, r := range rep.Results {
		v, ok := m.value(r)
		if !ok {
			continue
		}
		name := r.Structure
		var xv float64
		for _, prm := range r.Point {
			if prm.Name == x {
				xv, _ = strconv.ParseFloat(prm.Value, 64)
			} else {
				name += " " + prm.Name + "=" + prm.Value
			}
		}
		if x == "subs" {
			xv = float64(r.Subs)
		}
		if _, seen := series[name]; !seen {
			order = append(order, name)
		}
		series[name] = append(series[name], plotter.XY{X: xv, Y: v})
	}
	return series, order
}

// dotPlot shows one point per structure and point label.
func (rep *Report) dotPlot(p *plot.Plot, m metric) error {
	var xys plotter.XYs
	var names []string
	for _, r := range rep.Results {
		if v, ok := m.value(r); ok {
			xys = append(xys, plotter.XY{X: float64(len(names)), Y: v})
			names = append(names, r.Structure)
		}
	}
	if len(xys) == 0 {
		return nil
	}
	if spansDecade(xys, func(xy plotter.XY) float64 { return xy.Y }) {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Radius = vg.Points(4)
	p.Add(sc, plotter.NewGrid())
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	return nil
}

// logAxes switches an axis to log scale when its positive values span
// a decade or more.
func logAxes(p *plot.Plot, xys plotter.XYs) {
	if spansDecade(xys, func(xy plotter.XY) float64 { return xy.X }) {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if spansDecade(xys, func(xy plotter.XY) float64 { return xy.Y }) {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
}

// spansDecade reports whether every value is positive and the largest is
// at least ten times the smallest.
func spansDecade(xys plotter.XYs, coord func(plotter.XY) float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, xy := range xys {
		v := coord(xy)
		if v <= 0 {
			return false
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return len(xys) > 0 && hi >= 10*lo
}

func numeric(vals []string) bool {
	for _, v := range vals {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	return len(vals) > 0
}
