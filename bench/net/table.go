package netbench

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/sift-pubsub/sift/bench"
)

// WriteTable writes the per-system medians and the ratios as aligned
// text.
func (rep *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "workload %s: %d subscribers at router %d of %d, selectivity %s; at least %d events and %gs a run, window %d, %d run(s); load %.1f -> %.1f on %d cores\n",
		rep.Workload.Kind, len(rep.Workload.Filters), rep.Setup.Routers, rep.Setup.Routers, selectivityRange(rep.Workload.Selectivities),
		rep.Setup.Events, rep.Setup.MinSeconds, rep.Setup.Window, rep.Setup.Runs, rep.LoadStart, rep.LoadEnd, rep.Machine.Cores)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\trun s\tevents/s\tdeliveries/s\tCPU us/deliv\tdeliv/CPU-s\tbytes/deliv\tp50 us\tp99 us\tp999 us\tloaded p99 us\t")
	for _, s := range rep.Summary {
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f\t%.0f\t%.2f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", s.System, s.Seconds, s.EventsPerSec, s.DeliveriesPerSec,
			s.CPUPerDelivery, s.DeliveriesPerCPUSecond, s.BytesPerDelivery, s.PacedP50, s.PacedP99, s.PacedP999, s.LoadedP99)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeTransport(w, rep.Results)
	return bench.WriteRatios(w, rep.Ratios)
}

// writeTransport gives, for each run whose publishers report their
// transport, the packets they sent and the share declared lost.
func writeTransport(w io.Writer, rs []Result) {
	for _, r := range rs {
		if t := r.Transport; t != nil {
			fmt.Fprintf(w, "%s run %d publisher: %d packets sent, %d lost (%.3f%%), congestion window %d bytes, smoothed RTT %.0f us",
				r.System, r.Run, t.PacketsSent, t.PacketsLost, 100*t.LossRate(), t.CongestionWindow, t.SmoothedRTT)
			if p := r.PacedTransport; p != nil {
				fmt.Fprintf(w, "; paced: %d sent, %d lost", p.PacketsSent, p.PacketsLost)
			}
			fmt.Fprintln(w)
		}
	}
}

func selectivityRange(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmt.Sprintf("%.2f-%.2f%%", lo*100, hi*100)
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
