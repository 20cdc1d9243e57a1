package netbench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFiles writes results.json (everything, with the machine and the
// command), results.csv (one row per run) and the PNG plots into dir,
// creating it.
func (rep *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := rep.writeCSV(filepath.Join(dir, "results.csv")); err != nil {
		return fmt.Errorf("results.csv: %w", err)
	}
	return rep.WritePlots(dir)
}

var csvHeader = []string{
	"workload", "system", "run", "load_average", "events", "deliveries", "seconds", "events_per_second",
	"deliveries_per_second", "cpu_seconds", "cpu_us_per_delivery", "deliveries_per_cpu_second",
	"wire_bytes", "bytes_per_delivery", "wire_layer", "paced_p50_us", "paced_p99_us", "paced_p999_us",
	"loaded_p50_us", "loaded_p99_us", "loaded_p999_us",
}

func (rep *Report) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(csvHeader)
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	for _, r := range rep.Results {
		w.Write([]string{rep.Workload.Kind, r.System, strconv.Itoa(r.Run), g(r.LoadAverage), strconv.Itoa(r.Events),
			strconv.FormatInt(r.Deliveries, 10), g(r.Seconds), g(r.EventsPerSec), g(r.DeliveriesPerSec), g(r.CPUSeconds),
			g(r.CPUPerDelivery()), g(r.DeliveriesPerCPUSecond()), strconv.FormatInt(r.WireBytes, 10), g(r.BytesPerDelivery()),
			r.WireLayer, g(r.Paced.P50), g(r.Paced.P99), g(r.Paced.P999), g(r.Loaded.P50), g(r.Loaded.P99), g(r.Loaded.P999)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
