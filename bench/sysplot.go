package bench

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// SystemPlots draws the plots of a benchmark that runs several systems
// side by side (Sift in its modes and its peers): one group per system on
// the x axis, Label (the workload, topology and load) under every plot.
type SystemPlots struct {
	Systems []string
	Label   string
}

// Bars draws groups of bars, one group per system and one bar per series
// (series[k][i] is system i's value in series k, named names[k]; an empty
// name adds no legend entry).
func (sp SystemPlots) Bars(title, unit string, names []string, series []plotter.Values) (*plot.Plot, error) {
	p := sp.newPlot(title, unit)
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
	return p, nil
}

// Latency draws latency quantiles per system as points on a log axis
// (bars cannot start at zero on a log scale): series[k][i] is system i's
// value of quantile names[k], in microseconds.
func (sp SystemPlots) Latency(title string, names []string, series [][]float64) (*plot.Plot, error) {
	p := sp.newPlot(title, "microseconds (log)")
	lo, hi := math.Inf(1), 1.0
	for k, vals := range series {
		var xys plotter.XYs
		for i, v := range vals {
			y := max(v, 1)
			lo, hi = min(lo, y), max(hi, y)
			xys = append(xys, plotter.XY{X: float64(i) + 0.15*float64(k-1), Y: y})
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", title, err)
		}
		sc.Color, sc.Shape, sc.Radius = plotutil.Color(k), plotutil.Shape(k), vg.Points(4)
		p.Add(sc)
		p.Legend.Add(names[k], sc)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Min, p.X.Max = -0.5, float64(len(sp.Systems))-0.5
	p.Y.Min, p.Y.Max = lo/2, hi*2 // log ticks need a positive range
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	return p, nil
}

// newPlot returns a plot with the systems on the x axis and the legend
// below the title.
func (sp SystemPlots) newPlot(title, unit string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = sp.Label
	p.Y.Label.Text = unit
	p.Legend.YOffs = -vg.Points(24)
	p.NominalX(sp.Systems...)
	return p
}

// SavePlot writes p as dir/file (PNG, 16 x 10 cm).
func SavePlot(p *plot.Plot, dir, file string) error {
	if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, filepath.Join(dir, file)); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
