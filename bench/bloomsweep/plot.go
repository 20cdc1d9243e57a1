package bloomsweep

import (
	"fmt"
	"math"

	"github.com/sift-pubsub/sift/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WritePlots writes the PNG plots into dir:
//   - inner.png: inner-router CPU per event against filters per link,
//     exact (index and witness) and Bloom, per terms-per-event value;
//   - speedup.png: the whole chain's exact/Bloom CPU ratio against
//     filters per link, one line per terms value and chain length (above
//     1: Bloom forwarding pays);
//   - fprate.png: the measured one-unmet false-positive rate against terms
//     per event, with the formula;
//   - bytes.png: link bytes per delivered event per hop, exact and Bloom,
//     against terms per event (the largest filters per link).
func (rep *Report) WritePlots(dir string) error {
	for _, pl := range []struct {
		file string
		make func() (*plot.Plot, error)
	}{{"inner.png", rep.innerPlot}, {"speedup.png", rep.speedupPlot}, {"fprate.png", rep.fpPlot}, {"bytes.png", rep.bytesPlot}} {
		p, err := pl.make()
		if err != nil {
			return fmt.Errorf("plot %s: %w", pl.file, err)
		}
		if err := bench.SavePlot(p, dir, pl.file); err != nil {
			return err
		}
	}
	return nil
}

// line is one named series.
type line struct {
	name   string
	xys    plotter.XYs
	dashed bool
}

func (rep *Report) newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s\n%s, load %.0f-%.0f on %d cores", title, rep.Params, rep.LoadStart, rep.LoadEnd, rep.Machine.Cores)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	return p
}

// addLines draws the series with log axes where the values allow.
func addLines(p *plot.Plot, lines []line, logX, logY bool) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, l := range lines {
		if len(l.xys) == 0 {
			continue
		}
		ln, pts, err := plotter.NewLinePoints(l.xys)
		if err != nil {
			return err
		}
		ln.Color, pts.Color, pts.Shape = plotutil.Color(k), plotutil.Color(k), plotutil.Shape(k)
		if l.dashed {
			ln.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(ln, pts)
		p.Legend.Add(l.name, ln, pts)
		for _, xy := range l.xys {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
	}
	if logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if logY && lo > 0 {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = lo/2, hi*math.Pow(hi/lo, 0.8)*2 // room for the legend
	}
	return nil
}

func (rep *Report) innerPlot() (*plot.Plot, error) {
	p := rep.newPlot("Inner-router CPU per arriving event", "filters per link", "CPU ns per event")
	var lines []line
	for _, n := range rep.plotTerms() {
		var ex, wi, bl, bw plotter.XYs
		for _, pt := range rep.Points {
			if pt.Terms == n && pt.InnerExactNs > 0 && pt.InnerBloomNs > 0 && pt.InnerWitnessNs > 0 {
				ex = append(ex, plotter.XY{X: float64(pt.Filters), Y: pt.InnerExactNs})
				wi = append(wi, plotter.XY{X: float64(pt.Filters), Y: pt.InnerWitnessNs})
				bl = append(bl, plotter.XY{X: float64(pt.Filters), Y: pt.InnerBloomNs})
				if pt.InnerBloomWitnessNs > 0 {
					bw = append(bw, plotter.XY{X: float64(pt.Filters), Y: pt.InnerBloomWitnessNs})
				}
			}
		}
		lines = append(lines, line{fmt.Sprintf("exact index, %d terms", n), ex, true},
			line{fmt.Sprintf("exact witness, %d terms", n), wi, true}, line{fmt.Sprintf("bloom, %d terms", n), bl, false},
			line{fmt.Sprintf("bloom witness, %d terms", n), bw, false})
	}
	return p, addLines(p, lines, true, true)
}

func (rep *Report) speedupPlot() (*plot.Plot, error) {
	p := rep.newPlot("Whole-chain CPU, exact / Bloom (above 1: Bloom pays)", "filters per link", "exact / bloom")
	var lines []line
	for ci, l := range rep.Config.Chains {
		if ci != 0 && ci != len(rep.Config.Chains)-1 {
			continue // the shortest and the longest chain
		}
		for _, n := range rep.plotTerms() {
			var xys plotter.XYs
			for _, pt := range rep.Points {
				if pt.Terms != n {
					continue
				}
				for _, c := range pt.Chains {
					if c.Routers == l && c.Speedup > 0 {
						xys = append(xys, plotter.XY{X: float64(pt.Filters), Y: c.Speedup})
					}
				}
			}
			lines = append(lines, line{fmt.Sprintf("%d routers, %d terms", l, n), xys, ci == 0})
		}
	}
	return p, addLines(p, lines, true, true)
}

func (rep *Report) fpPlot() (*plot.Plot, error) {
	p := rep.newPlot("False positives: one unmet constraint", "terms per event (summary size)", "rate")
	var measured, formula plotter.XYs
	for _, n := range rep.plotTerms() {
		var sum, w float64
		f := 0.0
		for _, pt := range rep.Points {
			if pt.Terms == n && pt.ProbeCount > 0 {
				sum += pt.ProbeFP * float64(pt.ProbeCount)
				w += float64(pt.ProbeCount)
			}
			if pt.Terms == n {
				f = pt.FormulaFP
			}
		}
		if w > 0 && sum > 0 {
			measured = append(measured, plotter.XY{X: float64(n), Y: sum / w})
		}
		formula = append(formula, plotter.XY{X: float64(n), Y: f})
	}
	return p, addLines(p, []line{{"measured (unsaturated summaries)", measured, false}, {"(1 - e^(-kn/m))^k", formula, true}}, true, true)
}

func (rep *Report) bytesPlot() (*plot.Plot, error) {
	maxF := 0
	for _, pt := range rep.Points {
		maxF = max(maxF, pt.Filters)
	}
	p := rep.newPlot(fmt.Sprintf("Link bytes per delivered event, per hop (%d filters per link)", maxF), "terms per event", "bytes")
	var ex, bl plotter.XYs
	for _, pt := range rep.Points {
		if pt.Filters == maxF && len(pt.Chains) > 0 && pt.ExactForward > 0 {
			hops := float64(pt.Chains[0].Routers - 1)
			ex = append(ex, plotter.XY{X: float64(pt.Terms), Y: pt.Chains[0].ExactBytes / hops})
			bl = append(bl, plotter.XY{X: float64(pt.Terms), Y: pt.Chains[0].BloomBytes / hops})
		}
	}
	return p, addLines(p, []line{{"exact", ex, true}, {"bloom", bl, false}}, true, true)
}

// maxPlotTerms bounds the terms-per-event values a plot draws a series
// for: the full sweep's seven, at four series each, make an unreadable
// legend.
const maxPlotTerms = 4

// plotTerms returns the terms-per-event values the plots draw: all of
// them, or maxPlotTerms spread evenly from the smallest to the largest
// (10, 50, 200 and 1,000 of the full sweep). The table and files keep
// every point.
func (rep *Report) plotTerms() []int {
	ts := rep.Config.Terms
	if len(ts) <= maxPlotTerms {
		return ts
	}
	out := make([]int, maxPlotTerms)
	for i := range out {
		out[i] = ts[i*(len(ts)-1)/(maxPlotTerms-1)]
	}
	return out
}
