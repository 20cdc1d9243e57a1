package bloomsweep

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes the per-hop figures, one row per point, then the
// chain figures, one row per point and chain length.
func (rep *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "bloom sweep: %s, %s trees; %d events a point, hit share %g, %d round(s) of %gs CPU per role; load %.1f -> %.1f on %d cores\n",
		rep.Params, rep.Index, rep.Config.Events, rep.Config.Hit, rep.Config.Rounds, rep.Config.MinCPU, rep.LoadStart, rep.LoadEnd, rep.Machine.Cores)
	for i, pc := range rep.Pieces {
		fmt.Fprintf(w, "piece %d, %s UTC, %.0f s, load %.1f -> %.1f: %s\n", i+1, pc.Started.Format("2006-01-02 15:04"), pc.Seconds, pc.LoadStart, pc.LoadEnd, pc.Command)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "terms\tfilters\tfill\tsat %\texact fwd %\ttree fwd %\tlink FP %\tprobe FP\tformula FP\tfirst ns exact\tbloom\tinner ns index\twitness\tbloom\tbloom+w\tx index\tx witness\tw x w\t")
	for _, p := range rep.Points {
		fmt.Fprintf(tw, "%d\t%d\t%.3f\t%.1f\t%.1f\t%.1f\t%.1f\t%.4f\t%.4f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t\n", p.Terms, p.Filters, p.Fill,
			100*p.Saturated, 100*p.ExactForward, 100*p.BloomForward, 100*p.LinkFP, p.ProbeFP, p.FormulaFP,
			p.FirstExactNs, p.FirstBloomNs, p.InnerExactNs, p.InnerWitnessNs, p.InnerBloomNs, p.InnerBloomWitnessNs, p.InnerSpeedup, p.WitnessSpeedup, p.BloomWitnessSpeedup)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nwhole chain (first + inner + last router; exact inner routers decide by witness), per published event; link bytes per delivered event:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "terms\tfilters\trouters\tCPU ns exact\tbloom\texact/bloom\tbloom+w\texact/bloom+w\tbytes exact\tbloom\t")
	for _, p := range rep.Points {
		for _, c := range p.Chains {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%.0f\t%.2f\t%.0f\t%.2f\t%.0f\t%.0f\t\n", p.Terms, p.Filters, c.Routers,
				c.ExactNs, c.BloomNs, c.Speedup, c.BloomWitnessNs, c.WitnessSpeedup, c.ExactBytes, c.BloomBytes)
		}
	}
	return tw.Flush()
}
