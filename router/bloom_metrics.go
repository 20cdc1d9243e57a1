package router

import "github.com/prometheus/client_golang/prometheus"

// BloomMetrics are the Bloom forwarding metrics (docs/protocol.md, "Bloom
// forwarding"); they stay at zero in exact mode.
type BloomMetrics struct {
	// Summaries counts summaries computed by this router as first router.
	Summaries prometheus.Counter
	// Saturated counts those more than half full: the event was marked
	// exact and every router matched it exactly.
	Saturated prometheus.Counter
	// Fill is the distribution of the summaries' fill (fraction of bits set).
	Fill prometheus.Histogram
	// ExactIn counts events received from each link marked exact (label
	// link = the peer's name).
	ExactIn *prometheus.CounterVec
	// FalseForwards counts events that each link forwarded here on their
	// summary and that matched nothing here: no local subscription and no
	// link onward (label link = the peer that sent it).
	FalseForwards *prometheus.CounterVec
	// TreeWalks counts links an inner router decided for an event by
	// walking the link's tree; WitnessDecisions those it decided by the
	// witness the event came with (one lookup), which is what a chain
	// should mostly see.
	TreeWalks, WitnessDecisions prometheus.Counter
	// DictionaryTerms is the number of dictionary terms in use in this
	// router's component.
	DictionaryTerms prometheus.Gauge
	// TreeFilters is the number of (link, filter) entries in the trees.
	TreeFilters prometheus.Gauge
}

func newBloomMetrics(reg *prometheus.Registry) *BloomMetrics {
	m := &BloomMetrics{
		Summaries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sift_router_bloom_summaries_total", Help: "Event summaries computed at the first router."}),
		Saturated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sift_router_bloom_saturated_total", Help: "Summaries more than half full: the event was forwarded exactly instead."}),
		Fill: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sift_router_bloom_summary_fill", Help: "Fraction of summary bits set.",
			Buckets: []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1}}),
		ExactIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sift_router_bloom_exact_events_total", Help: "Events received marked exact (saturated summary), per neighbour."},
			[]string{"link"}),
		FalseForwards: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sift_router_bloom_false_forwards_total", Help: "Events a neighbour forwarded on their summary that matched nothing here (no local subscription, no link onward), per neighbour."},
			[]string{"link"}),
		TreeWalks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sift_router_bloom_tree_walks_total", Help: "Links decided for an event forwarded on its summary by walking the link's tree."}),
		WitnessDecisions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sift_router_bloom_witness_decisions_total", Help: "Links decided for an event forwarded on its summary by the witness it came with, without a tree walk."}),
		DictionaryTerms: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sift_router_bloom_dictionary_terms", Help: "Dictionary terms in use in this router's component."}),
		TreeFilters: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sift_router_bloom_tree_filters", Help: "Filters held from neighbours in the Bloom trees."}),
	}
	reg.MustRegister(m.Summaries, m.Saturated, m.Fill, m.ExactIn, m.FalseForwards, m.TreeWalks, m.WitnessDecisions, m.DictionaryTerms, m.TreeFilters)
	return m
}
