package router

import "github.com/prometheus/client_golang/prometheus"

// WitnessMetrics count how the link table decided where events that came
// from a neighbour router go (exact mode, linktable.go): by the witness
// alone, or by matching.
type WitnessMetrics struct {
	// Events counts events from links by outcome: "resolved" (the witness
	// decided every link, no matching), "matched" (a witness came but
	// did not decide), "absent" (no witness came: no filter of ours matched
	// at the previous router by hash, or it is not a router in exact
	// mode).
	Events    *prometheus.CounterVec
	byOutcome [3]prometheus.Counter
}

func newWitnessMetrics(reg *prometheus.Registry) *WitnessMetrics {
	m := &WitnessMetrics{Events: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sift_router_link_witness_events_total",
		Help: "Events from neighbour routers by how the link table decided their links: resolved by the witness, matched, or absent witness."},
		[]string{"outcome"})}
	for o, name := range [...]string{witnessAbsent: "absent", witnessResolved: "resolved", witnessMatched: "matched"} {
		m.byOutcome[o] = m.Events.WithLabelValues(name)
	}
	reg.MustRegister(m.Events)
	return m
}

// witnessCounts counts a batch's outcomes, added to the metrics at once.
type witnessCounts [3]int

func (m *WitnessMetrics) add(c *witnessCounts) {
	for o, n := range c {
		if n > 0 {
			m.byOutcome[o].Add(float64(n))
		}
	}
}
