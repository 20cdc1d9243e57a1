package durablebench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sift-pubsub/sift/bench"
)

// Report is a benchmark's every run, the per-system medians and the
// Sift/peer ratios, with what is needed to reproduce it.
type Report struct {
	bench.RunInfo
	Setup   Setup     `json:"setup"`
	Results []Result  `json:"results"`
	Summary []Summary `json:"summary"`
	Ratios  []Ratio   `json:"ratios"`
	// Warnings say what makes a figure of the report untrustworthy (a
	// catch-up phase too short to measure a rate).
	Warnings []string `json:"warnings,omitempty"`
}

// Setup is the topology, load and shape of the benchmark.
type Setup struct {
	Systems       []string `json:"systems"`
	Hops          int      `json:"hops"`
	SHBs          int      `json:"shbs"`
	Subscribers   int      `json:"subscribers"`
	Groups        int      `json:"groups"`
	Publishers    int      `json:"publishers"`
	InFlight      int      `json:"in_flight_per_publisher"`
	Events        int      `json:"events"`
	Payload       int      `json:"payload_bytes"`
	EventBytes    int      `json:"event_bytes"`
	ChurnEvery    string   `json:"disconnect_every,omitempty"`
	ChurnFor      string   `json:"disconnect_for,omitempty"`
	LatencyEvents int      `json:"latency_events"`
	Rate          float64  `json:"latency_rate"`
	CatchupEvents int      `json:"catchup_events,omitempty"`
	// MinCatchupSeconds is the shortest catch-up phase whose rate the
	// report trusts (minCatchup).
	MinCatchupSeconds float64 `json:"min_catchup_seconds,omitempty"`
	RestartSHB        bool    `json:"restart_shb,omitempty"`
	AckEvery          int     `json:"ack_every"`
	AckIdle           string  `json:"ack_idle"`
	Runs              int     `json:"runs"`
}

func newReport(cfg Config) *Report {
	ev := NewEvents(cfg.Groups, cfg.Payload, cfg.Seed)
	s := Setup{Hops: cfg.Topology.Hops, SHBs: cfg.Topology.SHBs, Subscribers: cfg.Subscribers, Groups: cfg.Groups,
		Publishers: cfg.Publishers, InFlight: cfg.InFlight, Events: cfg.Events, Payload: cfg.Payload,
		EventBytes: len(ev.Event(cfg.Events).AppendJSON(nil)), LatencyEvents: cfg.LatencyEvents, Rate: cfg.Rate,
		CatchupEvents: cfg.CatchupEvents, RestartSHB: cfg.RestartSHB, AckEvery: cfg.AckEvery, AckIdle: cfg.AckIdle.String(), Runs: cfg.Runs}
	if cfg.CatchupEvents > 0 {
		s.MinCatchupSeconds = minCatchup.Seconds()
	}
	if cfg.Churn.On() {
		s.ChurnEvery, s.ChurnFor = cfg.Churn.Every.String(), cfg.Churn.For.String()
	}
	for _, sys := range cfg.Systems {
		s.Systems = append(s.Systems, sys.Name())
	}
	return &Report{RunInfo: bench.StartRunInfo(cfg.Command), Setup: s}
}

// Summary is one system's medians over its runs.
type Summary struct {
	System         string  `json:"system"`
	Runs           int     `json:"runs"`
	AckedPerSec    float64 `json:"acked_publishes_per_second"`
	DeliveredPerS  float64 `json:"delivered_events_per_second"`
	CPUPerDelivery float64 `json:"cpu_us_per_delivery"`
	PacedP50       float64 `json:"paced_p50_us"`
	PacedP99       float64 `json:"paced_p99_us"`
	PacedP999      float64 `json:"paced_p999_us"`
	LoadedP50      float64 `json:"loaded_p50_us"`
	LoadedP99      float64 `json:"loaded_p99_us"`
	CatchupPerSec  float64 `json:"catchup_deliveries_per_second,omitempty"`
	CatchupCPU     float64 `json:"catchup_cpu_us_per_delivery,omitempty"`
	CatchupSeconds float64 `json:"catchup_seconds,omitempty"`
	CatchupFirst   float64 `json:"catchup_first_delivery_seconds,omitempty"`
	Redelivered    float64 `json:"redelivered"`
}

// Ratio compares Sift with a peer on one measure (see bench.Ratio).
type Ratio = bench.Ratio

func (rep *Report) finish() {
	rep.Finish()
	for _, sys := range rep.Setup.Systems {
		rep.Summary = append(rep.Summary, summarize(sys, rep.runsOf(sys)))
	}
	rep.warnShortCatchups()
	sift := (Sift{}).Name()
	if i := slices.IndexFunc(rep.Setup.Systems, func(s string) bool { return strings.HasPrefix(s, sift+"-r") }); i >= 0 {
		rep.replicatedRatios(rep.Setup.Systems[i])
		return
	}
	for _, p := range rep.Setup.Systems {
		if p != sift && slices.Contains(rep.Setup.Systems, sift) {
			rep.Ratios = append(rep.Ratios, rep.ratios(sift, p, issue11Target)...)
		}
	}
}

// replicatedRatios compares the replicated Sift with the unreplicated
// one and with each replicated peer, on the targets of issue 24.
func (rep *Report) replicatedRatios(rsift string) {
	sift := (Sift{}).Name()
	for _, p := range rep.Setup.Systems {
		switch p {
		case rsift:
		case sift:
			rep.Ratios = append(rep.Ratios, rep.ratios(rsift, p, func(m ratioMeasure) (float64, string) {
				if m.name != ratioMeasures[0].name {
					return 0, ""
				}
				return 0.5, ">= 0.5x (issue 24: replicated, at least half the unreplicated pubend's acknowledged publishes/s)"
			})...)
		default:
			rep.Ratios = append(rep.Ratios, rep.ratios(rsift, p, func(m ratioMeasure) (float64, string) {
				if m.name != ratioMeasures[0].name {
					return 0, ""
				}
				return 3, ">= 3x (issue 24: replicated Sift at least 3x the replicated peer's acknowledged publishes/s)"
			})...)
		}
	}
}

// issue11Target is the target of the unreplicated comparison: Sift at
// least JetStream on throughput.
func issue11Target(m ratioMeasure) (float64, string) {
	if m.target == 0 {
		return 0, ""
	}
	return m.target, ">= 1x (issue 11: Sift at least JetStream's durable throughput)"
}

func (rep *Report) runsOf(sys string) []Result {
	return bench.RunsOf(rep.Results, sys)
}

func summarize(sys string, rs []Result) Summary {
	med := func(f func(Result) float64) float64 { return bench.MedianOf(rs, f) }
	return Summary{System: sys, Runs: len(rs),
		AckedPerSec:    med(func(r Result) float64 { return r.AckedPerSec }),
		DeliveredPerS:  med(func(r Result) float64 { return r.DeliveredPerS }),
		CPUPerDelivery: med(Result.CPUPerDelivery),
		PacedP50:       med(func(r Result) float64 { return r.Paced.P50 }),
		PacedP99:       med(func(r Result) float64 { return r.Paced.P99 }),
		PacedP999:      med(func(r Result) float64 { return r.Paced.P999 }),
		LoadedP50:      med(func(r Result) float64 { return r.Loaded.P50 }),
		LoadedP99:      med(func(r Result) float64 { return r.Loaded.P99 }),
		CatchupPerSec:  med(func(r Result) float64 { return r.CatchupPerSec }),
		CatchupCPU:     med(Result.CatchupCPUPerDelivery),
		CatchupSeconds: med(func(r Result) float64 { return r.CatchupSeconds }),
		CatchupFirst:   med(func(r Result) float64 { return r.CatchupFirstSeconds }),
		Redelivered:    med(func(r Result) float64 { return float64(r.Redelivered) }),
	}
}

// ratioMeasure is one compared measure and the issue's target on it: the
// Sift/peer ratio must be at least target.
type ratioMeasure struct {
	name   string
	value  func(Result) float64
	target float64 // 0: none
}

var ratioMeasures = []ratioMeasure{
	{"acknowledged publishes/s", func(r Result) float64 { return r.AckedPerSec }, 1},
	{"delivered events/s", func(r Result) float64 { return r.DeliveredPerS }, 1},
	{"CPU per delivered event", Result.CPUPerDelivery, 0},
	{"paced p50 latency", func(r Result) float64 { return r.Paced.P50 }, 0},
	{"paced p99 latency", func(r Result) float64 { return r.Paced.P99 }, 0},
	{"catch-up deliveries/s", func(r Result) float64 { return r.CatchupPerSec }, 0},
}

// ratios pairs the i-th run of sift with the i-th run of peer.
func (rep *Report) ratios(sift, peer string, target func(ratioMeasure) (float64, string)) []Ratio {
	a, b := rep.runsOf(sift), rep.runsOf(peer)
	var out []Ratio
	for _, m := range ratioMeasures {
		r, ok := bench.PairedRatio(m.name, sift, peer, bench.Values(a, m.value), bench.Values(b, m.value))
		if !ok {
			continue
		}
		if t, why := target(m); t > 0 {
			met := r.Median >= t
			r.Target = why
			r.Met = &met
		}
		out = append(out, r)
	}
	return out
}

// minCatchup is the shortest catch-up phase whose rate means
// anything: a shorter one is mostly the subscribers' return (their
// reconnections, each session's first fetches), which a system pays once
// per return, not per delivery.
const minCatchup = 2 * time.Second

// warnShortCatchups adds a warning when some run's catch-up phase was
// shorter than minCatchup: its deliveries/s (and the ratio on
// them) measure the start-up, not a catch-up rate.
func (rep *Report) warnShortCatchups() {
	var short []float64
	for _, r := range rep.Results {
		if r.CatchupSeconds > 0 && r.CatchupSeconds < minCatchup.Seconds() {
			short = append(short, r.CatchupSeconds)
		}
	}
	if len(short) == 0 {
		return
	}
	span := fmt.Sprintf("%.2f", slices.Min(short))
	if hi := fmt.Sprintf("%.2f", slices.Max(short)); hi != span {
		span += "-" + hi
	}
	rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d of %d catch-up phases lasted %s s, under %.0f s: their catch-up deliveries/s "+
		"measure the start-up (reconnecting, the first fetches), not a rate; raise --catchup-events",
		len(short), len(rep.Results), span, minCatchup.Seconds()))
}
