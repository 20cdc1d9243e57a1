package netbench

import (
	"fmt"

	"github.com/sift-pubsub/sift/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
		p, err := rep.plots().Bars(b.title, b.unit, []string{""}, []plotter.Values{vals})
		if err != nil {
			return err
		}
		if err := bench.SavePlot(p, dir, b.file); err != nil {
			return err
		}
	}
	p, err := rep.latencyPlot()
	if err != nil {
		return err
	}
	if err := bench.SavePlot(p, dir, "latency.png"); err != nil {
		return err
	}
	if p, err = rep.runsPlot(); err != nil {
		return err
	}
	return bench.SavePlot(p, dir, "runs.png")
}

// setupLabel names the workload and topology under a plot.
func (rep *Report) setupLabel() string {
	return fmt.Sprintf("%s workload, %d routers, load average %.0f-%.0f on %d cores",
		rep.Workload.Kind, rep.Setup.Routers, rep.LoadStart, rep.LoadEnd, rep.Machine.Cores)
}

func (rep *Report) runsPlot() (*plot.Plot, error) {
	perRun := bench.RunPoints(rep.Setup.Systems, rep.Results, func(r Result) float64 { return r.EventsPerSec })
	return rep.plots().Runs("Throughput per run (systems alternate within a run)", "events/s", perRun)
}

// plots returns the plot helper with this report's systems and label.
func (rep *Report) plots() bench.SystemPlots {
	names := make([]string, len(rep.Summary))
	for i, s := range rep.Summary {
		names[i] = s.System
	}
	return bench.SystemPlots{Systems: names, Label: rep.setupLabel()}
}

// latencyPlot draws the paced p50, p99 and p999 of each system.
func (rep *Report) latencyPlot() (*plot.Plot, error) {
	var q [][3]float64
	for _, s := range rep.Summary {
		q = append(q, [3]float64{s.PacedP50, s.PacedP99, s.PacedP999})
	}
	return rep.plots().PacedLatency(fmt.Sprintf("Publish-to-deliver latency at %g events/s (paced)", rep.Setup.Rate), q)
}
