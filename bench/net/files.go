package netbench

import (
	"strconv"

	"github.com/sift-pubsub/sift/bench"
)

// WriteFiles writes results.json (everything, with the machine and the
// command), results.csv (one row per run) and the PNG plots into dir,
// creating it.
func (rep *Report) WriteFiles(dir string) error {
	if err := bench.WriteResults(dir, rep, csvHeader, rep.csvRows()); err != nil {
		return err
	}
	return rep.WritePlots(dir)
}

var csvHeader = []string{
	"workload", "system", "run", "load_average", "events", "deliveries", "seconds", "events_per_second",
	"deliveries_per_second", "cpu_seconds", "cpu_us_per_delivery", "deliveries_per_cpu_second",
	"wire_bytes", "bytes_per_delivery", "wire_layer", "paced_p50_us", "paced_p99_us", "paced_p999_us",
	"loaded_p50_us", "loaded_p99_us", "loaded_p999_us", "publisher_packets_sent", "publisher_packets_lost",
}

// csvRows returns one results.csv row per run.
func (rep *Report) csvRows() [][]string {
	var rows [][]string
	g := bench.CSVFloat
	for _, r := range rep.Results {
		rows = append(rows, append([]string{rep.Workload.Kind, r.System, strconv.Itoa(r.Run), g(r.LoadAverage), strconv.Itoa(r.Events),
			strconv.FormatInt(r.Deliveries, 10), g(r.Seconds), g(r.EventsPerSec), g(r.DeliveriesPerSec), g(r.CPUSeconds),
			g(r.CPUPerDelivery()), g(r.DeliveriesPerCPUSecond()), strconv.FormatInt(r.WireBytes, 10), g(r.BytesPerDelivery()),
			r.WireLayer, g(r.Paced.P50), g(r.Paced.P99), g(r.Paced.P999), g(r.Loaded.P50), g(r.Loaded.P99), g(r.Loaded.P999)},
			transportCells(r.Transport)...))
	}
	return rows
}

// transportCells are a run's publisher packet counts, empty for a
// system that does not report them.
func transportCells(t *TransportStats) []string {
	if t == nil {
		return []string{"", ""}
	}
	return []string{strconv.FormatUint(t.PacketsSent, 10), strconv.FormatUint(t.PacketsLost, 10)}
}
