package router

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sift-pubsub/sift/router/core"
)

// LinkTableMetrics count, in exact mode, what decided where the link
// table sent each event (linktable.go).
type LinkTableMetrics struct {
	// Events counts events routed by the link table by what decided
	// (label decided_by): "witness" (the filter the previous router
	// found the event to match is held by every link it could go to),
	// "cache" (filters that matched events with the same key value
	// match it: linkcache.go) or "index" (it was matched).
	Events    *prometheus.CounterVec
	byOutcome [core.DecidedNoLinks]prometheus.Counter
}

func newLinkTableMetrics(reg *prometheus.Registry) *LinkTableMetrics {
	m := &LinkTableMetrics{Events: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sift_router_link_table_events_total",
		Help: "Events the exact link table routed, by what decided their links: witness, cache or index."},
		[]string{"decided_by"})}
	for d, name := range [...]string{core.DecidedByIndex: "index", core.DecidedByWitness: "witness", core.DecidedByCache: "cache"} {
		m.byOutcome[d] = m.Events.WithLabelValues(name)
	}
	reg.MustRegister(m.Events)
	return m
}

// count adds n events to the decision the core's metric k counts.
func (m *LinkTableMetrics) count(k core.MetricKind, n uint64) {
	d := core.DecidedByIndex
	switch k {
	case core.ByWitness:
		d = core.DecidedByWitness
	case core.ByCache:
		d = core.DecidedByCache
	}
	m.byOutcome[d].Add(float64(n))
}
