package bloomsweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/sift-pubsub/sift/bench"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
)

// Point is one (terms per event, filters per link) point in both modes.
type Point struct {
	Terms   int `json:"terms_per_event"`
	Filters int `json:"filters_per_link"`
	Values  int `json:"values_per_attribute"`
	Events  int `json:"events"`
	// EventBytes is an encoded event's mean size; EntryBytes a
	// BloomPublish entry's (the event with its summary).
	EventBytes float64 `json:"event_bytes"`
	EntryBytes float64 `json:"entry_bytes"`
	// Fill is the summaries' mean fraction of bits set; Saturated the
	// share of events whose summary was too full (matched exactly).
	Fill      float64 `json:"summary_fill"`
	Saturated float64 `json:"saturated"`
	// ExactForward is the share of events a filter of the link matches:
	// what the first router forwards in both modes (it matches exactly)
	// and what every later hop of the chain sees. BloomForward is the
	// share an inner router would send on a link holding these filters
	// on the summary alone, and LinkFP the share of the events no filter
	// matches that it would send anyway: what a branch of the routing
	// tree that the events do not match carries in Bloom mode.
	ExactForward float64 `json:"exact_forward"`
	BloomForward float64 `json:"bloom_forward"`
	LinkFP       float64 `json:"link_fp_rate"`
	// ProbeFP is the measured rate at which a filter with one unmet
	// constraint passes an unsaturated summary (ProbeCount probes), and
	// FormulaFP the formula's (1 - e^(-kn/m))^k at n = Terms.
	ProbeFP    float64 `json:"probe_fp_rate"`
	ProbeCount int     `json:"probes"`
	FormulaFP  float64 `json:"formula_fp_rate"`
	// CPU nanoseconds per event, medians over the rounds: at the first
	// router per published event, at an inner router per event arriving
	// (the events a filter matches).
	// InnerExactNs is an inner router matching each event against its
	// index (exact mode where the witness does not decide: branches),
	// InnerWitnessNs checking the one filter the event's witness names
	// (exact mode along a chain).
	FirstExactNs   float64 `json:"first_exact_ns"`
	FirstBloomNs   float64 `json:"first_bloom_ns"`
	InnerExactNs   float64 `json:"inner_exact_ns"`
	InnerWitnessNs float64 `json:"inner_witness_ns"`
	InnerBloomNs   float64 `json:"inner_bloom_ns"`
	// InnerBloomWitnessNs is an inner router in Bloom mode deciding by
	// the witness its entries carry (bloomfwd.Trees.RouteWitness: the
	// first router's matched filter checked against the summary, the tree
	// walked only when that fails), as routers do on links of
	// wire.VersionBloomWitness.
	InnerBloomWitnessNs float64 `json:"inner_bloom_witness_ns"`
	// InnerSpeedup is InnerExactNs / InnerBloomNs and WitnessSpeedup
	// InnerWitnessNs / InnerBloomNs: above 1, Bloom forwarding costs an
	// inner router less per event.
	InnerSpeedup   float64 `json:"inner_speedup"`
	WitnessSpeedup float64 `json:"witness_speedup"`
	// BloomWitnessSpeedup is InnerWitnessNs / InnerBloomWitnessNs: exact
	// mode's witness against Bloom's, both along a chain.
	BloomWitnessSpeedup float64 `json:"bloom_witness_speedup"`
	BuildSeconds        float64 `json:"build_seconds"`
	Chains              []Chain `json:"chains"`
	// exactBytes and bloomBytes are the link bytes per published event.
	exactBytes, bloomBytes float64
}

// Chain is a point's figures combined for a chain of Routers routers.
type Chain struct {
	Routers int `json:"routers"`
	// CPU nanoseconds per published event over the whole chain: the
	// first router, the inner ones and the last (which matches exactly
	// every event that arrives, in both modes).
	ExactNs float64 `json:"exact_ns"`
	BloomNs float64 `json:"bloom_ns"`
	Speedup float64 `json:"speedup"` // ExactNs / BloomNs
	// BloomWitnessNs is BloomNs with inner routers deciding by witness
	// (InnerBloomWitnessNs), and WitnessSpeedup ExactNs / BloomWitnessNs.
	BloomWitnessNs float64 `json:"bloom_witness_ns"`
	WitnessSpeedup float64 `json:"witness_speedup"`
	// Link bytes per delivered event (an event some filter matches) over
	// the chain's Routers-1 links.
	ExactBytes float64 `json:"exact_bytes_per_delivered"`
	BloomBytes float64 `json:"bloom_bytes_per_delivered"`
}

// Report is a sweep's every point, with what is needed to reproduce it.
type Report struct {
	bench.RunInfo
	Params string  `json:"bloom_params"`
	Index  string  `json:"bloom_index"`
	Config Setup   `json:"setup"`
	Points []Point `json:"points"`
	// Pieces are, for a merged report (Merge), the runs it joins.
	Pieces []bench.RunInfo `json:"pieces,omitempty"`
}

// Setup is the sweep's configuration as run.
type Setup struct {
	Terms   []int   `json:"terms"`
	Filters []int   `json:"filters"`
	Chains  []int   `json:"chains"`
	Events  int     `json:"events"`
	Probes  int     `json:"probes"`
	Hit     float64 `json:"hit"`
	MinCPU  float64 `json:"min_cpu_seconds"`
	Rounds  int     `json:"rounds"`
	Seed    uint64  `json:"seed"`
}

// Run sweeps every (terms, filters) point of cfg.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	rep := &Report{RunInfo: bench.StartRunInfo(cfg.Command), Params: bloom.Params{}.Resolved().String(), Index: cfg.Index,
		Config: Setup{Terms: cfg.Terms, Filters: cfg.Filters, Chains: cfg.Chains, Events: cfg.Events, Probes: cfg.Probes,
			Hit: cfg.Hit, MinCPU: cfg.MinCPU.Seconds(), Rounds: cfg.Rounds, Seed: cfg.Seed}}
	total := len(cfg.Terms) * len(cfg.Filters)
	for i, f := range cfg.Filters {
		for j, n := range cfg.Terms {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			done := i*len(cfg.Terms) + j
			if cfg.Progress != nil {
				cfg.Progress(done, total, fmt.Sprintf("%d terms per event, %d filters per link", n, f))
			}
			p, err := runPoint(ctx, cfg, n, f, pointSeed(cfg.Seed, n, f))
			if err != nil {
				return nil, fmt.Errorf("bloom sweep: %d terms, %d filters: %w", n, f, err)
			}
			rep.Points = append(rep.Points, p)
			runtime.GC()
		}
	}
	if cfg.Progress != nil {
		cfg.Progress(total, total, "")
	}
	rep.Finish()
	return rep, nil
}

// runPoint builds and measures one point. It stops soon after ctx ends
// (between its phases, and between the bodies it times): a point at 10^6
// filters runs for minutes on a loaded machine, longer than a benchmark
// may hold a shared one.
func runPoint(ctx context.Context, cfg Config, terms, filters int, seed uint64) (Point, error) {
	r := rand.New(rand.NewPCG(seed, 23))
	start := time.Now()
	w := newWorkload(r, terms, filters, cfg.Events, cfg.Hit)
	rt, err := newRouter(&w, cfg.Index)
	if err != nil {
		return Point{}, err
	}
	p := Point{Terms: terms, Filters: filters, Values: w.values, Events: len(w.events), BuildSeconds: time.Since(start).Seconds()}
	if err := ctx.Err(); err != nil {
		return p, err
	}
	d, err := rt.decide(r, &w, cfg.Probes)
	if err != nil {
		return p, err
	}
	p.fill(&w, d)
	all, exactIn, bloomIn := publishBodies(&w, nil), publishBodies(&w, d.exact), bloomBodies(d, false)
	bloomWitnessIn := bloomBodies(d, true)
	rt.witnesses, rt.byWitness = d.witnesses, make(map[uint64]match.Filter, len(d.witnesses))
	for i, f := range d.witnesses {
		rt.byWitness[d.witnessHashes[i]] = f
	}
	var first, inner [2][]float64 // [exact, bloom] per round
	var witness, bloomWitness []float64
	for round := range cfg.Rounds {
		for k := range 2 {
			mode := k ^ round&1 // alternate which mode goes first
			var f, g role
			var fb, gb [][]byte
			if mode == 0 {
				f, fb, g, gb = rt.firstExact, all, rt.innerExact, exactIn
			} else {
				f, fb, g, gb = rt.firstBloom, all, rt.innerBloom, bloomIn
			}
			ns, err := timeRole(ctx, f, fb, cfg.MinCPU)
			if err != nil {
				return p, err
			}
			first[mode] = append(first[mode], ns)
			if ns, err = timeRole(ctx, g, gb, cfg.MinCPU); err != nil {
				return p, err
			}
			inner[mode] = append(inner[mode], ns)
			if mode == 0 {
				rt.wpos = 0
				if ns, err = timeRole(ctx, rt.innerWitness, exactIn, cfg.MinCPU); err != nil {
					return p, err
				}
				witness = append(witness, ns)
			} else {
				if ns, err = timeRole(ctx, rt.innerBloomWitness, bloomWitnessIn, cfg.MinCPU); err != nil {
					return p, err
				}
				bloomWitness = append(bloomWitness, ns)
			}
		}
	}
	p.InnerWitnessNs, p.InnerBloomWitnessNs = bench.Median(witness), bench.Median(bloomWitness)
	if p.InnerBloomWitnessNs > 0 {
		p.BloomWitnessSpeedup = p.InnerWitnessNs / p.InnerBloomWitnessNs
	}
	p.FirstExactNs, p.FirstBloomNs = bench.Median(first[0]), bench.Median(first[1])
	p.InnerExactNs, p.InnerBloomNs = bench.Median(inner[0]), bench.Median(inner[1])
	if p.InnerBloomNs > 0 {
		p.InnerSpeedup = p.InnerExactNs / p.InnerBloomNs
		p.WitnessSpeedup = p.InnerWitnessNs / p.InnerBloomNs
	}
	for _, l := range cfg.Chains {
		p.Chains = append(p.Chains, p.chain(l))
	}
	return p, nil
}

// fill sets the point's decision figures.
func (p *Point) fill(w *pointWorkload, d decisions) {
	n := float64(len(w.events))
	var exact, fwd, falseFwd, misses, eventBytes, entryBytes int
	for i := range w.events {
		eventBytes += len(w.raw[i])
		entryBytes += len(d.entries[i])
		if d.exact[i] {
			exact++
		} else {
			misses++
			if d.bloom[i] {
				falseFwd++
			}
		}
		if d.bloom[i] {
			fwd++
		}
	}
	p.EventBytes, p.EntryBytes = float64(eventBytes)/n, float64(entryBytes)/n
	p.Fill, p.Saturated = d.fill, float64(d.saturated)/n
	p.ExactForward, p.BloomForward = float64(exact)/n, float64(fwd)/n
	if misses > 0 {
		p.LinkFP = float64(falseFwd) / float64(misses)
	}
	if d.probes > 0 {
		p.ProbeFP, p.ProbeCount = d.probeHits/float64(d.probes), d.probes
	}
	prm := bloom.Params{}.Resolved()
	p.FormulaFP = bloom.ExpectedFPRate(prm.M, prm.K, uint(p.Terms))
	p.exactBytes, p.bloomBytes = float64(d.exactBytes)/n, float64(d.bytes)/n
}

// chain combines the per-hop figures for a chain of l routers: l-2
// inner routers and the last see the events the first router forwarded
// (those a filter matches, in both modes); inner routers in exact mode
// decide by the witness, and the last matches exactly in both modes
// (innerExact's work).
func (p *Point) chain(l int) Chain {
	c := Chain{Routers: l}
	inner := float64(l - 2)
	c.ExactNs = p.FirstExactNs + p.ExactForward*(inner*p.InnerWitnessNs+p.InnerExactNs)
	c.BloomNs = p.FirstBloomNs + p.ExactForward*(inner*p.InnerBloomNs+p.InnerExactNs)
	c.BloomWitnessNs = p.FirstBloomNs + p.ExactForward*(inner*p.InnerBloomWitnessNs+p.InnerExactNs)
	if c.BloomNs > 0 {
		c.Speedup = c.ExactNs / c.BloomNs
	}
	if c.BloomWitnessNs > 0 {
		c.WitnessSpeedup = c.ExactNs / c.BloomWitnessNs
	}
	if p.ExactForward > 0 {
		c.ExactBytes = float64(l-1) * p.exactBytes / p.ExactForward
		c.BloomBytes = float64(l-1) * p.bloomBytes / p.ExactForward
	}
	return c
}
