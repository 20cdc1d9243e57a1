package netbench

import (
	"strings"
	"time"

	"github.com/sift-pubsub/sift/bench"
	"github.com/sift-pubsub/sift/bench/workload"
)

// Report is a benchmark's every run, the per-system medians and the
// ratios the issue sets targets on, with what is needed to reproduce it.
type Report struct {
	Command   string        `json:"command"`
	Machine   bench.Machine `json:"machine"`
	Started   time.Time     `json:"started"`
	Seconds   float64       `json:"seconds"`
	LoadStart float64       `json:"load_average_start"`
	LoadEnd   float64       `json:"load_average_end"`
	Workload  WorkloadInfo  `json:"workload"`
	Setup     Setup         `json:"setup"`
	Results   []Result      `json:"results"`
	Summary   []Summary     `json:"summary"`
	Ratios    []Ratio       `json:"ratios"`
}

// WorkloadInfo describes the workload as generated.
type WorkloadInfo struct {
	Kind          string    `json:"kind"`
	Seed          uint64    `json:"seed"`
	Events        int       `json:"distinct_events"`
	Symbols       int       `json:"symbols"`
	Filters       []string  `json:"filters"`
	Subjects      []string  `json:"subjects"`
	Selectivities []float64 `json:"selectivities"`
}

// Setup is the topology and measurement options.
type Setup struct {
	Systems       []string `json:"systems"`
	Routers       int      `json:"routers"`
	Publishers    int      `json:"publishers"`
	Events        int      `json:"events"`
	Window        int      `json:"window"`
	Rate          float64  `json:"latency_rate"`
	LatencyEvents int      `json:"latency_events"`
	Runs          int      `json:"runs"`
}

func newReport(cfg Config, w workload.NetWorkload) *Report {
	info := WorkloadInfo{Kind: w.Kind, Seed: cfg.Seed, Events: len(w.Events), Symbols: cfg.Workload.Symbols, Selectivities: w.Selectivities()}
	for _, s := range w.Subs {
		info.Filters = append(info.Filters, s.Filter.String())
		info.Subjects = append(info.Subjects, s.Subject)
	}
	setup := Setup{Routers: cfg.Routers, Publishers: cfg.Publishers, Events: cfg.Events, Window: cfg.Window,
		Rate: cfg.Rate, LatencyEvents: cfg.LatencyEvents, Runs: cfg.Runs}
	for _, s := range cfg.Systems {
		setup.Systems = append(setup.Systems, s.Name())
	}
	return &Report{Command: cfg.Command, Machine: bench.CurrentMachine(), Started: time.Now().UTC(),
		LoadStart: bench.LoadAverage(), Workload: info, Setup: setup}
}

// Summary is one system's medians over its runs.
type Summary struct {
	System                 string  `json:"system"`
	Runs                   int     `json:"runs"`
	EventsPerSec           float64 `json:"events_per_second"`
	DeliveriesPerSec       float64 `json:"deliveries_per_second"`
	CPUPerDelivery         float64 `json:"cpu_us_per_delivery"`
	DeliveriesPerCPUSecond float64 `json:"deliveries_per_cpu_second"`
	BytesPerDelivery       float64 `json:"bytes_per_delivery"`
	WireLayer              string  `json:"wire_layer,omitempty"`
	PacedP50               float64 `json:"paced_p50_us"`
	PacedP99               float64 `json:"paced_p99_us"`
	PacedP999              float64 `json:"paced_p999_us"`
	LoadedP50              float64 `json:"loaded_p50_us"`
	LoadedP99              float64 `json:"loaded_p99_us"`
	LoadedP999             float64 `json:"loaded_p999_us"`
}

// Ratio compares a Sift system with a peer system on one measure: the
// median over runs of the per-run ratio (runs alternate, so each ratio
// compares runs made under about the same load). Target is the issue's
// bound; Met says whether the median meets it (nil: no target).
type Ratio struct {
	Measure string    `json:"measure"`
	Sift    string    `json:"sift"`
	Peer    string    `json:"peer"`
	Median  float64   `json:"median"`
	PerRun  []float64 `json:"per_run"`
	Target  string    `json:"target,omitempty"`
	Met     *bool     `json:"met,omitempty"`
}

// finish computes the summaries and ratios and closes the report.
func (rep *Report) finish() {
	rep.Seconds = time.Since(rep.Started).Seconds()
	rep.LoadEnd = bench.LoadAverage()
	for _, sys := range rep.Setup.Systems {
		rep.Summary = append(rep.Summary, summarize(sys, rep.runsOf(sys)))
	}
	for _, s := range rep.Setup.Systems {
		if !strings.HasPrefix(s, "sift") {
			continue
		}
		for _, p := range rep.Setup.Systems {
			if !strings.HasPrefix(p, "sift") {
				rep.Ratios = append(rep.Ratios, rep.ratios(s, p)...)
			}
		}
	}
}

func (rep *Report) runsOf(sys string) []Result {
	var out []Result
	for _, r := range rep.Results {
		if r.System == sys {
			out = append(out, r)
		}
	}
	return out
}

func summarize(sys string, rs []Result) Summary {
	med := func(f func(Result) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return bench.Median(xs)
	}
	s := Summary{System: sys, Runs: len(rs),
		EventsPerSec:           med(func(r Result) float64 { return r.EventsPerSec }),
		DeliveriesPerSec:       med(func(r Result) float64 { return r.DeliveriesPerSec }),
		CPUPerDelivery:         med(Result.CPUPerDelivery),
		DeliveriesPerCPUSecond: med(Result.DeliveriesPerCPUSecond),
		BytesPerDelivery:       med(Result.BytesPerDelivery),
		PacedP50:               med(func(r Result) float64 { return r.Paced.P50 }),
		PacedP99:               med(func(r Result) float64 { return r.Paced.P99 }),
		PacedP999:              med(func(r Result) float64 { return r.Paced.P999 }),
		LoadedP50:              med(func(r Result) float64 { return r.Loaded.P50 }),
		LoadedP99:              med(func(r Result) float64 { return r.Loaded.P99 }),
		LoadedP999:             med(func(r Result) float64 { return r.Loaded.P999 }),
	}
	if len(rs) > 0 {
		s.WireLayer = rs[0].WireLayer
	}
	return s
}

// ratioMeasure is one compared measure: its value in a run, and the
// issue's target for the workload it applies to.
type ratioMeasure struct {
	name     string
	value    func(Result) float64
	workload string
	target   float64
	atLeast  bool
}

var ratioMeasures = []ratioMeasure{
	{"throughput (events/s)", func(r Result) float64 { return r.EventsPerSec }, workload.NetTopic, 0.5, true},
	{"paced p99 latency", func(r Result) float64 { return r.Paced.P99 }, workload.NetTopic, 2, false},
	{"loaded p99 latency", func(r Result) float64 { return r.Loaded.P99 }, "", 0, false},
	{"useful deliveries per CPU second", Result.DeliveriesPerCPUSecond, workload.NetContent, 5, true},
	{"wire bytes per delivery", Result.BytesPerDelivery, "", 0, false},
}

// ratios pairs the i-th run of sift with the i-th run of peer.
func (rep *Report) ratios(sift, peer string) []Ratio {
	a, b := rep.runsOf(sift), rep.runsOf(peer)
	var out []Ratio
	for _, m := range ratioMeasures {
		r := Ratio{Measure: m.name, Sift: sift, Peer: peer}
		for i := range min(len(a), len(b)) {
			if x, y := m.value(a[i]), m.value(b[i]); x > 0 && y > 0 {
				r.PerRun = append(r.PerRun, x/y)
			}
		}
		if len(r.PerRun) == 0 {
			continue
		}
		r.Median = bench.Median(r.PerRun)
		if m.workload == rep.Workload.Kind {
			met := r.Median >= m.target
			r.Target = ">= " + trimFloat(m.target) + "x"
			if !m.atLeast {
				met = r.Median <= m.target
				r.Target = "<= " + trimFloat(m.target) + "x"
			}
			r.Met = &met
		}
		out = append(out, r)
	}
	return out
}
