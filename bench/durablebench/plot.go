package durablebench

import (
	"fmt"

	"github.com/sift-pubsub/sift/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
	p, err := rep.plots().Bars("Durable throughput (medians)", "per second", []string{"acknowledged publishes", "delivered events"},
		[]plotter.Values{acked, delivered})
	if err != nil {
		return err
	}
	if err := bench.SavePlot(p, dir, "throughput.png"); err != nil {
		return err
	}
	if p, err = rep.plots().Bars("CPU per delivered event (whole process)", "microseconds", []string{""}, []plotter.Values{cpu}); err != nil {
		return err
	}
	if err := bench.SavePlot(p, dir, "cpu.png"); err != nil {
		return err
	}
	if p, err = rep.latencyPlot(); err != nil {
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

// setupLabel names the topology and load under a plot.
func (rep *Report) setupLabel() string {
	return fmt.Sprintf("%d hops, %d SHB, %d subs, load %.0f-%.0f on %d cores", rep.Setup.Hops, rep.Setup.SHBs,
		rep.Setup.Subscribers, rep.LoadStart, rep.LoadEnd, rep.Machine.Cores)
}

func (rep *Report) runsPlot() (*plot.Plot, error) {
	perRun := bench.RunPoints(rep.Setup.Systems, rep.Results, func(r Result) float64 { return r.DeliveredPerS })
	return rep.plots().Runs("Delivered events/s per run (systems alternate)", "delivered events/s", perRun)
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
	return rep.plots().PacedLatency(fmt.Sprintf("Durable publish-to-deliver latency at %g events/s", rep.Setup.Rate), q)
}
