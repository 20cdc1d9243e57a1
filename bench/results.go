package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// WriteResults writes a benchmark's report into dir, creating it: v as
// results.json (indented) and header plus rows as results.csv. Every
// benchmark command (match, net, durable) writes its files through it,
// so they all have the same layout.
func WriteResults(dir string, v any, header []string, rows [][]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := writeCSV(filepath.Join(dir, "results.csv"), header, rows); err != nil {
		return fmt.Errorf("results.csv: %w", err)
	}
	return nil
}

func writeCSV(path string, header []string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows) // flushes
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CSVFloat renders x for a CSV cell, with six significant digits.
func CSVFloat(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
