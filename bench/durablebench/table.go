package durablebench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sift-pubsub/sift/bench"
)

// WriteTable writes the setup, the per-system medians and the ratios as
// aligned text.
func (rep *Report) WriteTable(w io.Writer) error {
	s := rep.Setup
	fmt.Fprintf(w, "durable: %d hops, %d SHB(s), %d subscribers (%d groups), %d publishers x %d in flight, %d events of %d bytes%s; %d run(s); load %.1f -> %.1f on %d cores\n",
		s.Hops, s.SHBs, s.Subscribers, s.Groups, s.Publishers, s.InFlight, s.Events, s.EventBytes, rep.shape(),
		s.Runs, rep.LoadStart, rep.LoadEnd, rep.Machine.Cores)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tacked/s\tdelivered/s\tCPU us/deliv\tp50 us\tp99 us\tp999 us\tloaded p50 us\tloaded p99 us\tcatch-up/s\tcatch-up s\t1st ms\tcatch-up CPU us\tredelivered\t")
	for _, m := range rep.Summary {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.0f\t%.1f\t%.0f\t\n", m.System, m.AckedPerSec,
			m.DeliveredPerS, m.CPUPerDelivery, m.PacedP50, m.PacedP99, m.PacedP999, m.LoadedP50, m.LoadedP99,
			m.CatchupPerSec, m.CatchupSeconds, m.CatchupFirst*1e3, m.CatchupCPU, m.Redelivered)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := bench.WriteRatios(w, rep.Ratios); err != nil {
		return err
	}
	for _, warn := range rep.Warnings {
		if _, err := fmt.Fprintf(w, "\nwarning: %s\n", warn); err != nil {
			return err
		}
	}
	return nil
}

// shape describes the churn and catch-up options.
func (rep *Report) shape() string {
	var parts []string
	if rep.Setup.ChurnEvery != "" {
		parts = append(parts, fmt.Sprintf("subscribers away %s every %s", rep.Setup.ChurnFor, rep.Setup.ChurnEvery))
	}
	if rep.Setup.CatchupEvents > 0 {
		how := "all subscribers away"
		if rep.Setup.RestartSHB {
			how = "SHB restarted"
		}
		parts = append(parts, fmt.Sprintf("catch-up of %d events (%s)", rep.Setup.CatchupEvents, how))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}
