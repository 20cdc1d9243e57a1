package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/sift-pubsub/sift/router"
)

// Status is the router's state as GET /v1/status reports it, for the
// dashboard: counters are totals since the router started (the page
// turns successive samples into rates).
type Status struct {
	Router string `json:"router"`
	// Time is when the sample was taken, in Unix milliseconds.
	Time  int64        `json:"time"`
	Links []LinkStatus `json:"links"`
	// EventsIn, EventsOut and Matches are the router's counters
	// (sift_router_events_in_total, _events_out_total, _matches_total).
	EventsIn  float64 `json:"events_in"`
	EventsOut float64 `json:"events_out"`
	Matches   float64 `json:"matches"`
	// Subscriptions counts the subscriptions of local clients (the
	// gateway's among them); Connections the client connections.
	Subscriptions int     `json:"subscriptions"`
	Connections   float64 `json:"connections"`
	// MemoryBytes is the router process's resident memory, when known.
	MemoryBytes float64 `json:"memory_bytes,omitempty"`
	// Durable is the durable side (nil when durable delivery is off).
	Durable *router.DurableStatus `json:"durable,omitempty"`
	Gateway GatewayStatus         `json:"gateway"`
}

// LinkStatus is one link up: its peer, the routers reached through it,
// the filters held for it and sent to it, and its event counters.
type LinkStatus struct {
	Peer      string   `json:"peer"`
	Reach     []string `json:"reach"`
	Received  int      `json:"filters_received"`
	Forwarded int      `json:"filters_forwarded"`
	EventsIn  float64  `json:"events_in"`
	EventsOut float64  `json:"events_out"`
}

// GatewayStatus are the gateway's own counters.
type GatewayStatus struct {
	Published          uint64 `json:"published"`
	Delivered          uint64 `json:"delivered"`
	Subscribers        int64  `json:"sse_subscribers"`
	DurableSubscribers int64  `json:"durable_sse_subscribers"`
	SlowConsumers      uint64 `json:"slow_consumers"`
}

// Status samples the router's state.
func (g *Gateway) Status(ctx context.Context) (Status, error) {
	r := g.cfg.Router
	st := Status{Router: r.Name(), Time: time.Now().UnixMilli(), Links: []LinkStatus{}}
	routes, err := r.Routes(ctx)
	if err != nil {
		return st, err
	}
	subs, err := r.Subscriptions(ctx, false)
	if err != nil {
		return st, err
	}
	for _, i := range subs.Interfaces {
		if i.Kind == "client" {
			st.Subscriptions += i.Subscriptions
		}
	}
	counters := gather(r.Metrics())
	for _, l := range routes {
		st.Links = append(st.Links, LinkStatus{
			Peer: l.Peer, Reach: l.Reach, Received: len(l.Received), Forwarded: len(l.Forwarded),
			EventsIn: counters.link[[2]string{l.Peer, "in"}], EventsOut: counters.link[[2]string{l.Peer, "out"}],
		})
	}
	st.EventsIn = counters.plain["sift_router_events_in_total"]
	st.EventsOut = counters.plain["sift_router_events_out_total"]
	st.Matches = counters.plain["sift_router_matches_total"]
	st.Connections = counters.plain["sift_router_connections"]
	st.MemoryBytes = counters.plain["process_resident_memory_bytes"]
	if d, err := r.Durable(ctx); err == nil {
		st.Durable = &d
	}
	st.Gateway = GatewayStatus{
		Published: g.stats.published.Load(), Delivered: g.stats.delivered.Load(),
		Subscribers: g.stats.subscribers.Load(), DurableSubscribers: g.stats.durableSubs.Load(),
		SlowConsumers: g.stats.slow.Load(),
	}
	return st, nil
}

// counterValues are the metrics the status reads: unlabelled ones by
// name, link events by (peer, dir).
type counterValues struct {
	plain map[string]float64
	link  map[[2]string]float64
}

func gather(m *router.Metrics) counterValues {
	cv := counterValues{plain: map[string]float64{}, link: map[[2]string]float64{}}
	fams, _ := m.Registry.Gather() // a partial answer is still worth showing
	for _, f := range fams {
		for _, met := range f.GetMetric() {
			v := value(met)
			if f.GetName() == "sift_router_link_events_total" {
				var peer, dir string
				for _, lp := range met.GetLabel() {
					switch lp.GetName() {
					case "link":
						peer = lp.GetValue()
					case "dir":
						dir = lp.GetValue()
					}
				}
				cv.link[[2]string{peer, dir}] = v
			} else if len(met.GetLabel()) == 0 {
				cv.plain[f.GetName()] = v
			}
		}
	}
	return cv
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return 0
}

// status serves GET /v1/status.
func (g *Gateway) status(w http.ResponseWriter, r *http.Request, _ string) {
	st, err := g.Status(r.Context())
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error(), nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(st)
}
