package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFiles writes results.json, results.csv and the PNG plots into dir,
// creating it.
func (rep *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := rep.writeJSON(filepath.Join(dir, "results.json")); err != nil {
		return err
	}
	if err := rep.writeCSV(filepath.Join(dir, "results.csv")); err != nil {
		return err
	}
	return rep.WritePlots(dir)
}

func (rep *Report) writeJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	return nil
}

// csvHeader lists the measure columns after the swept knobs.
var csvHeader = []string{
	"structure", "subscriptions", "events", "status", "build_seconds", "inserts_per_second",
	"heap_bytes", "runs", "match_mean_ns", "match_median_ns", "match_p99_ns", "match_cpu_ns",
	"matches_per_event", "candidates_per_event", "false_positive_rate",
	"speedup_vs_scan", "speedup_vs_expr", "checked_events", "reason",
}

func (rep *Report) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("results.csv: %w", err)
	}
	w := csv.NewWriter(f)
	var header []string
	for _, sw := range rep.Sweeps {
		header = append(header, sw.Knob)
	}
	w.Write(append(header, csvHeader...))
	for _, r := range rep.Results {
		var row []string
		for _, p := range r.Point {
			row = append(row, p.Value)
		}
		w.Write(append(row, rep.csvRow(r)...))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("results.csv: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("results.csv: %w", err)
	}
	return nil
}

func (rep *Report) csvRow(r Result) []string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
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
		g(rep.Speedup(r, "scan")), g(rep.Speedup(r, ExprName)), strconv.Itoa(r.Checked), r.Reason,
	}
}
