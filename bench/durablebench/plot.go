package durablebench

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WritePlots writes the PNG plots into dir: throughput.png (acknowledged
// publishes/s and delivered events/s per system, medians), cpu.png (CPU
// per delivered event), latency.png (paced p50, p99, p999, log scale) and
// runs.png (each run's delivered events/s, to show the noise).
func (rep *Report) WritePlots(dir string) error {
	acked, delivered, cpu := make(plotter.Values, len(rep.Summary)), make(plotter.Values, len(rep.Summary)), make(plotter.Values, len(rep.Summary))
	for i, s := range rep.Summary {
		acked[i], delivered[i], cpu[i] = s.AckedPerSec, s.DeliveredPerS, s.CPUPerDelivery
	}
	p, err := rep.barPlot("Durable throughput (medians)", "per second", []string{"acknowledged publishes", "delivered events"},
		[]plotter.Values{acked, delivered})
	if err != nil {
		return err
	}
	if err := save(p, dir, "throughput.png"); err != nil {
		return err
	}
	if p, err = rep.barPlot("CPU per delivered event (whole process)", "microseconds", []string{""}, []plotter.Values{cpu}); err != nil {
		return err
	}
	if err := save(p, dir, "cpu.png"); err != nil {
		return err
	}
	if p, err = rep.latencyPlot(); err != nil {
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

// setupLabel names the topology and load under a plot.
func (rep *Report) setupLabel() string {
	return fmt.Sprintf("%d hops, %d SHB, %d subs, load %.0f-%.0f on %d cores", rep.Setup.Hops, rep.Setup.SHBs,
		rep.Setup.Subscribers, rep.LoadStart, rep.LoadEnd, rep.Machine.Cores)
}

func (rep *Report) systemNames() []string {
	out := make([]string, len(rep.Summary))
	for i, s := range rep.Summary {
		out[i] = s.System
	}
	return out
}

// barPlot draws groups of bars, one group per system and one bar per
// series (series[k][i] is system i's value in series k).
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
	p.Legend.YOffs = -vg.Points(24)
	p.NominalX(rep.systemNames()...)
	return p, nil
}

// latencyPlot draws the paced p50, p99 and p999 of each system as points
// on a log axis.
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
	p.Title.Text = fmt.Sprintf("Durable publish-to-deliver latency at %g events/s", rep.Setup.Rate)
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
	p.Legend.YOffs = -vg.Points(24)
	p.NominalX(rep.systemNames()...)
	p.X.Min, p.X.Max = -0.5, float64(len(rep.Summary))-0.5
	p.Y.Min, p.Y.Max = lo/2, hi*2
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	return p, nil
}

func (rep *Report) runsPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Delivered events/s per run (systems alternate)"
	p.X.Label.Text = "run - " + rep.setupLabel()
	p.Y.Label.Text = "delivered events/s"
	var args []any
	for _, sys := range rep.Setup.Systems {
		var xys plotter.XYs
		for _, r := range rep.runsOf(sys) {
			xys = append(xys, plotter.XY{X: float64(r.Run), Y: r.DeliveredPerS})
		}
		args = append(args, sys, xys)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, fmt.Errorf("plot runs: %w", err)
	}
	p.Y.Min = 0
	return p, nil
}
