package netbench

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WritePlots writes the PNG plots into dir: throughput.png, cpu.png and
// bytes.png (one bar per system, its median over runs), latency.png
// (paced p50, p99 and p999 per system, log scale) and runs.png (each
// run's throughput per system, to show the noise the alternation
// averages out).
func (rep *Report) WritePlots(dir string) error {
	bars := []struct {
		file, title, unit string
		value             func(Summary) float64
	}{
		{"throughput.png", "Throughput (events published/s, to last delivery)", "events/s", func(s Summary) float64 { return s.EventsPerSec }},
		{"cpu.png", "CPU per useful delivery (whole process)", "microseconds", func(s Summary) float64 { return s.CPUPerDelivery }},
		{"bytes.png", "Wire bytes per useful delivery", "bytes", func(s Summary) float64 { return s.BytesPerDelivery }},
	}
	for _, b := range bars {
		vals := make(plotter.Values, len(rep.Summary))
		for i, s := range rep.Summary {
			vals[i] = b.value(s)
		}
		p, err := rep.barPlot(b.title, b.unit, []string{""}, []plotter.Values{vals})
		if err != nil {
			return err
		}
		if err := save(p, dir, b.file); err != nil {
			return err
		}
	}
	p, err := rep.latencyPlot()
	if err != nil {
		return err
	}
	if err := save(p, dir, "latency.png"); err != nil {
		return err
	}
	if p, err = rep.runsPlot(); err != nil {
		return err
	}
	return save(p, dir, "runs.png")
}

func save(p *plot.Plot, dir, file string) error {
	if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, filepath.Join(dir, file)); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// barPlot draws groups of bars, one group per system and one bar per
// series of values (series[k][i] is system i's value in series k).
func (rep *Report) barPlot(title, unit string, names []string, series []plotter.Values) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = rep.setupLabel()
	p.Y.Label.Text = unit
	w := vg.Points(60 / float64(len(series)))
	for k, vals := range series {
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", title, err)
		}
		b.Color = plotutil.Color(k)
		b.Offset = w * vg.Length(float64(k)-float64(len(series)-1)/2)
		p.Add(b)
		if names[k] != "" {
			p.Legend.Add(names[k], b)
		}
	}
	p.Legend.Top = true
	p.NominalX(rep.systemNames()...)
	return p, nil
}

// setupLabel names the workload and topology under a plot.
func (rep *Report) setupLabel() string {
	return fmt.Sprintf("%s workload, %d routers, load average %.0f-%.0f on %d cores",
		rep.Workload.Kind, rep.Setup.Routers, rep.LoadStart, rep.LoadEnd, rep.Machine.Cores)
}

func (rep *Report) systemNames() []string {
	out := make([]string, len(rep.Summary))
	for i, s := range rep.Summary {
		out[i] = s.System
	}
	return out
}

// latencyPlot draws the paced p50, p99 and p999 of each system as points
// on a log axis (bars cannot start at zero on a log scale).
func (rep *Report) latencyPlot() (*plot.Plot, error) {
	qs := []struct {
		name string
		v    func(Summary) float64
	}{
		{"p50", func(s Summary) float64 { return s.PacedP50 }},
		{"p99", func(s Summary) float64 { return s.PacedP99 }},
		{"p999", func(s Summary) float64 { return s.PacedP999 }},
	}
	p := plot.New()
	lo, hi := math.Inf(1), 1.0
	p.Title.Text = fmt.Sprintf("Publish-to-deliver latency at %g events/s (paced)", rep.Setup.Rate)
	p.X.Label.Text = rep.setupLabel()
	p.Y.Label.Text = "microseconds (log)"
	for k, q := range qs {
		var xys plotter.XYs
		for i, s := range rep.Summary {
			y := max(q.v(s), 1)
			lo, hi = min(lo, y), max(hi, y)
			xys = append(xys, plotter.XY{X: float64(i) + 0.15*float64(k-1), Y: y})
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("plot latency: %w", err)
		}
		sc.Color = plotutil.Color(k)
		sc.Shape = plotutil.Shape(k)
		sc.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(q.name, sc)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.YOffs = -vg.Points(24) // below the title
	p.NominalX(rep.systemNames()...)
	p.X.Min, p.X.Max = -0.5, float64(len(rep.Summary))-0.5
	p.Y.Min, p.Y.Max = lo/2, hi*2 // log ticks need a positive range
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	return p, nil
}

func (rep *Report) runsPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Throughput per run (systems alternate within a run)"
	p.X.Label.Text = "run - " + rep.setupLabel()
	p.Y.Label.Text = "events/s"
	var args []any
	for _, sys := range rep.Setup.Systems {
		var xys plotter.XYs
		for _, r := range rep.runsOf(sys) {
			xys = append(xys, plotter.XY{X: float64(r.Run), Y: r.EventsPerSec})
		}
		args = append(args, sys, xys)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, fmt.Errorf("plot runs: %w", err)
	}
	p.Y.Min = 0
	return p, nil
}
