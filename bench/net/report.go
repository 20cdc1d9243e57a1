package netbench

import (
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/bench"
	"github.com/sift-pubsub/sift/bench/workload"
)

// Report is a benchmark's every run, the per-system medians and the
// ratios the issue sets targets on, with what is needed to reproduce it.
type Report struct {
	bench.RunInfo
	Workload WorkloadInfo `json:"workload"`
	Setup    Setup        `json:"setup"`
	Results  []Result     `json:"results"`
	Summary  []Summary    `json:"summary"`
	Ratios   []Ratio      `json:"ratios"`
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
	MinSeconds    float64  `json:"min_seconds"`
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
	setup := Setup{Routers: cfg.Routers, Publishers: cfg.Publishers, Events: cfg.Events, MinSeconds: cfg.Duration.Seconds(), Window: cfg.Window,
		Rate: cfg.Rate, LatencyEvents: cfg.LatencyEvents, Runs: cfg.Runs}
	for _, s := range cfg.Systems {
		setup.Systems = append(setup.Systems, s.Name())
	}
	return &Report{RunInfo: bench.StartRunInfo(cfg.Command), Workload: info, Setup: setup}
}

// Summary is one system's medians over its runs.
type Summary struct {
	System                 string  `json:"system"`
	Runs                   int     `json:"runs"`
	Seconds                float64 `json:"seconds"`
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

// Ratio compares a Sift system with a peer system on one measure (see
// bench.Ratio).
type Ratio = bench.Ratio

// finish computes the summaries and ratios and closes the report.
func (rep *Report) finish() {
	rep.Finish()
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
	if slices.Contains(rep.Setup.Systems, bloomSystem) && slices.Contains(rep.Setup.Systems, exactSystem) {
		rep.Ratios = append(rep.Ratios, rep.ratios(bloomSystem, exactSystem)...)
	}
}

func (rep *Report) runsOf(sys string) []Result {
	return bench.RunsOf(rep.Results, sys)
}

func summarize(sys string, rs []Result) Summary {
	med := func(f func(Result) float64) float64 { return bench.MedianOf(rs, f) }
	s := Summary{System: sys, Runs: len(rs),
		Seconds:                med(func(r Result) float64 { return r.Seconds }),
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
// targets set on it, per workload (none: no target). Targets against a
// peer hold for every Sift mode; bloomTargets hold for sift-bloom against
// sift-exact.
type ratioMeasure struct {
	name         string
	value        func(Result) float64
	targets      map[string]float64
	bloomTargets map[string]float64
	atLeast      bool
}

var ratioMeasures = []ratioMeasure{
	{"throughput (events/s)", func(r Result) float64 { return r.EventsPerSec },
		map[string]float64{workload.NetTopic: 1}, map[string]float64{workload.NetTopic: 0.8, workload.NetContent: 0.8}, true},
	{"paced p99 latency", func(r Result) float64 { return r.Paced.P99 }, map[string]float64{workload.NetTopic: 2}, nil, false},
	{"loaded p99 latency", func(r Result) float64 { return r.Loaded.P99 }, nil, nil, false},
	{"useful deliveries per CPU second", Result.DeliveriesPerCPUSecond,
		map[string]float64{workload.NetTopic: 1, workload.NetContent: 10}, map[string]float64{workload.NetTopic: 0.8, workload.NetContent: 0.8}, true},
	{"wire bytes per delivery", Result.BytesPerDelivery, nil, nil, false},
}

// bloomSystem and exactSystem are compared with each other when both ran.
const bloomSystem, exactSystem = "sift-" + ModeBloom, "sift-" + ModeExact

// ratios pairs the i-th run of sift with the i-th run of peer.
func (rep *Report) ratios(sift, peer string) []Ratio {
	a, b := rep.runsOf(sift), rep.runsOf(peer)
	var out []Ratio
	for _, m := range ratioMeasures {
		r, ok := bench.PairedRatio(m.name, sift, peer, bench.Values(a, m.value), bench.Values(b, m.value))
		if !ok {
			continue
		}
		targets := m.targets
		if strings.HasPrefix(peer, "sift") {
			targets = m.bloomTargets
		}
		if target, ok := targets[rep.Workload.Kind]; ok {
			met := r.Median >= target
			r.Target = ">= " + trimFloat(target) + "x"
			if !m.atLeast {
				met = r.Median <= target
				r.Target = "<= " + trimFloat(target) + "x"
			}
			r.Met = &met
		}
		out = append(out, r)
	}
	return out
}
