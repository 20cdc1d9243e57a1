package bench

import "strconv"

// WriteFiles writes results.json, results.csv and the PNG plots into dir,
// creating it.
func (rep *Report) WriteFiles(dir string) error {
	var header []string
	for _, sw := range rep.Sweeps {
		header = append(header, sw.Knob)
	}
	rows := make([][]string, 0, len(rep.Results))
	for _, r := range rep.Results {
		var row []string
		for _, p := range r.Point {
			row = append(row, p.Value)
		}
		rows = append(rows, append(row, rep.csvRow(r)...))
	}
	if err := WriteResults(dir, rep, append(header, csvHeader...), rows); err != nil {
		return err
	}
	return rep.WritePlots(dir)
}

// csvHeader lists the measure columns after the swept knobs.
var csvHeader = []string{
	"structure", "subscriptions", "events", "status", "build_seconds", "inserts_per_second",
	"heap_bytes", "runs", "match_mean_ns", "match_median_ns", "match_p99_ns", "match_cpu_ns",
	"matches_per_event", "candidates_per_event", "false_positive_rate",
	"speedup_vs_scan", "speedup_vs_expr", "checked_events", "reason", "build",
}

func (rep *Report) csvRow(r Result) []string {
	g := CSVFloat
	opt := func(x *float64) string {
		if x == nil {
			return ""
		}
		return g(*x)
	}
	return []string{
		r.Structure, strconv.Itoa(r.Subs), strconv.Itoa(r.Events), string(r.Status),
		g(r.BuildSeconds), g(r.InsertsPerSec), strconv.FormatInt(r.HeapBytes, 10), strconv.Itoa(r.Runs),
		g(r.MeanNs), g(r.MedianNs), g(r.P99Ns), g(r.CPUNs), g(r.MatchesPerEvent),
		opt(r.CandidatesPerEvent), opt(r.FalsePositiveRate),
		g(rep.Speedup(r, "scan")), g(rep.Speedup(r, ExprName)), strconv.Itoa(r.Checked), r.Reason, r.Build,
	}
}
