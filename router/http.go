package router

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Handler serves the router's operational endpoints: /metrics
// (Prometheus), /healthz (200 once the router accepts clients, 503
// before), /readyz (200 while the router accepts clients: 503 while it
// starts and once it drains, so a load balancer stops sending new
// clients), /debug/subscriptions (a JSON summary; ?filters=1 lists every
// filter) and /debug/routes (per router link: peer, routers behind it,
// filters forwarded and received, unacknowledged Routes; JSON; ?counts=1
// gives the numbers of filters instead of the lists) and
// /debug/durable (per pubend and per durable subscriber positions; JSON,
// 404 when durable delivery is off); and POST /admin/pubend/{pubend}, the
// membership changes of a replicated pubend (durable_admin.go; from
// loopback addresses only).
func (r *Router) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(r.metrics.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-r.ready:
			w.Write([]byte("ok\n"))
		default:
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-r.ready:
			if r.draining.Load() {
				http.Error(w, "draining", http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte("ready\n"))
		default:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("GET /debug/subscriptions", func(w http.ResponseWriter, req *http.Request) {
		s, err := r.Subscriptions(req.Context(), req.URL.Query().Get("filters") != "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, s)
	})
	mux.HandleFunc("GET /debug/routes", func(w http.ResponseWriter, req *http.Request) {
		routes, err := r.routes(req.Context(), req.URL.Query().Get("counts") != "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, struct {
			Router string            `json:"router"`
			Links  []mesh.LinkRoutes `json:"links"`
		}{r.cfg.Name, routes})
	})
	mux.HandleFunc("GET /debug/durable", func(w http.ResponseWriter, req *http.Request) {
		st, err := r.Durable(req.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		writeJSON(w, st)
	})
	mux.HandleFunc("POST /admin/pubend/{pubend}", r.serveAdminHTTP)
	return mux
}

// writeJSON answers with v as indented JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
