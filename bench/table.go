package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the results as an aligned table, one row per
// structure and point, with each structure's speedup over scan and expr
// at the same point, then the reasons of skipped or failed rows.
func (rep *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "workload %s: %s\n", rep.Workload, pointLabel(rep.Params))
	fmt.Fprintf(w, "machine: %s, %d cores, %s; load average %.1f at start, %.1f at end\n",
		rep.Machine.CPU, rep.Machine.Cores, rep.Machine.GoVersion, rep.LoadStart, rep.LoadEnd)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\tstructure\tstatus\tbuild s\tinserts/s\theap MB\tmean us\tmedian us\tp99 us\tcpu us\tmatches/ev\tcand/ev\tfp rate\tx scan\tx expr\truns\t")
	var notes []string
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			pointLabel(r.Point), r.Structure, r.Status,
			num(r.BuildSeconds, r.BuildSeconds > 0, "%.3f"), si(r.InsertsPerSec),
			num(float64(r.HeapBytes)/(1<<20), r.BuildSeconds > 0, "%.1f"),
			micros(r.MeanNs, r), micros(r.MedianNs, r), micros(r.P99Ns, r), micros(r.CPUNs, r),
			num(r.MatchesPerEvent, r.Measured(), "%.2f"),
			optional(r.CandidatesPerEvent, "%.1f"), optional(r.FalsePositiveRate, "%.2g"),
			speedup(rep.Results, r, "scan"), speedup(rep.Results, r, ExprName), num(float64(r.Runs), r.Runs > 0, "%.0f"))
		if r.Reason != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", pointLabel(r.Point), r.Structure, r.Reason))
		}
		if r.Stats != "" {
			notes = append(notes, fmt.Sprintf("%s %s stats: %s", pointLabel(r.Point), r.Structure, r.Stats))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  x scan, x expr: times faster than scan and expr (CPU time per event where measured, else mean)")
	if b := rep.builds(); len(b) > 1 {
		fmt.Fprintf(w, "  results from %d builds (resumed with --resume-any-build): %s\n", len(b), strings.Join(b, "; "))
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, "  "+n); err != nil {
			return err
		}
	}
	return nil
}

// Speedup returns how many times faster r matches than the named
// structure at the same point, or 0 when either was not measured. It
// compares CPU time per event when both have it, which a loaded machine
// disturbs far less than wall-clock time, and mean wall-clock time
// otherwise.
func (rep *Report) Speedup(r Result, than string) float64 {
	for _, o := range rep.Results {
		if o.Structure != than || !samePoint(o.Point, r.Point) || !o.Measured() || !r.Measured() {
			continue
		}
		if o.CPUNs > 0 && r.CPUNs > 0 {
			return o.CPUNs / r.CPUNs
		}
		if r.MeanNs > 0 {
			return o.MeanNs / r.MeanNs
		}
	}
	return 0
}

func speedup(results []Result, r Result, than string) string {
	rep := Report{Results: results}
	if x := rep.Speedup(r, than); x > 0 {
		return fmt.Sprintf("%.3g", x)
	}
	return "-"
}

func samePoint(a, b []Param) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// pointLabel renders swept values as "subs=1000 width=0.3", or "-".
func pointLabel(ps []Param) string {
	if len(ps) == 0 {
		return "-"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + "=" + p.Value
	}
	return strings.Join(parts, " ")
}

func num(x float64, ok bool, format string) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

func micros(ns float64, r Result) string { return num(ns/1e3, r.Measured(), "%.2f") }

func optional(x *float64, format string) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf(format, *x)
}

// si renders a rate with a k, M or G suffix.
func si(x float64) string {
	switch {
	case x <= 0:
		return "-"
	case x >= 1e9:
		return fmt.Sprintf("%.3gG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.3gM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.3gk", x/1e3)
	}
	return fmt.Sprintf("%.3g", x)
}

// builds lists the builds that measured the results, each with how many
// results it measured, in the order first seen.
func (rep *Report) builds() []string {
	var order []string
	count := map[string]int{}
	for _, r := range rep.Results {
		b := r.Build
		if b == "" {
			b = "unknown"
		}
		if count[b] == 0 {
			order = append(order, b)
		}
		count[b]++
	}
	out := make([]string, len(order))
	for i, b := range order {
		out[i] = fmt.Sprintf("%s (%d)", b, count[b])
	}
	return out
}
