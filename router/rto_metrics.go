package router

import "github.com/prometheus/client_golang/prometheus"

// AssistMetrics count the routing-table work of client subscriptions
// (docs/protocol.md, "Client-assisted placement"): covering tests the
// router did, by how the subscription was placed, the covering tests
// assisting clients did instead, and how placements ended.
type AssistMetrics struct {
	// Tests counts covering tests, label kind: "local" (placed by the
	// router alone, RTO off or no assistant), "done" (done by the router
	// for RTO or FF placements: verification and fallbacks included) and
	// "saved" (done by assisting clients instead: two per filter of each
	// RTO vector, up and down, one per fixed filter of each FF claim;
	// counted once per vector whatever the number of clients asked).
	Tests *prometheus.CounterVec
	// Placements counts RTO, FF and claimed placements, labels mode
	// (rto|ff|claim) and
	// outcome: placed (from the answers or claims), fallback (the router
	// placed the filter itself: verification failed, answers malformed,
	// the table changed meanwhile, an assistant timed out or left; for a
	// claim: it was false, or named no subscription of the client).
	Placements *prometheus.CounterVec
	// Assistants is the number of connected clients offering assistance.
	Assistants prometheus.Gauge
}

func newAssistMetrics(reg *prometheus.Registry) *AssistMetrics {
	m := &AssistMetrics{
		Tests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sift_router_assist_covering_tests_total",
			Help: "Covering tests for client subscriptions: local (router alone), done (router, RTO/FF) and saved (by assisting clients)."},
			[]string{"kind"}),
		Placements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sift_router_assist_placements_total",
			Help: "RTO, FF and claimed placements by mode and outcome (placed, fallback)."},
			[]string{"mode", "outcome"}),
		Assistants: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sift_router_assistants", Help: "Connected clients offering RTO/FF assistance."}),
	}
	reg.MustRegister(m.Tests, m.Placements, m.Assistants)
	return m
}
