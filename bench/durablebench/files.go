package durablebench

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
	"system", "run", "load_average", "hops", "shbs", "subscribers", "events", "deliveries", "ack_seconds", "seconds",
	"acked_publishes_per_second", "delivered_events_per_second", "cpu_seconds", "cpu_us_per_delivery",
	"disconnections", "paced_p50_us", "paced_p99_us", "paced_p999_us", "loaded_p50_us", "loaded_p99_us",
	"loaded_p999_us", "catchup_deliveries", "catchup_seconds", "catchup_first_delivery_seconds", "catchup_deliveries_per_second",
	"catchup_cpu_us_per_delivery", "redelivered",
}

// csvRows returns one results.csv row per run.
func (rep *Report) csvRows() [][]string {
	var rows [][]string
	g := bench.CSVFloat
	i := strconv.Itoa
	for _, r := range rep.Results {
		rows = append(rows, []string{r.System, i(r.Run), g(r.LoadAverage), i(rep.Setup.Hops), i(rep.Setup.SHBs), i(rep.Setup.Subscribers),
			i(r.Events), strconv.FormatInt(r.Deliveries, 10), g(r.AckSeconds), g(r.Seconds), g(r.AckedPerSec),
			g(r.DeliveredPerS), g(r.CPUSeconds), g(r.CPUPerDelivery()), i(r.Disconnections), g(r.Paced.P50),
			g(r.Paced.P99), g(r.Paced.P999), g(r.Loaded.P50), g(r.Loaded.P99), g(r.Loaded.P999),
			strconv.FormatInt(r.Backlog, 10), g(r.CatchupSeconds), g(r.CatchupFirstSeconds), g(r.CatchupPerSec), g(r.CatchupCPUPerDelivery()),
			strconv.FormatInt(r.Redelivered, 10)})
	}
	return rows
}
