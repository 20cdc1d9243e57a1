package router

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the router's operational endpoints: /metrics
// (Prometheus), /healthz (200 once the router accepts clients, 503
// before) and /debug/subscriptions (a JSON summary; ?filters=1 lists every
// filter).
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
	mux.HandleFunc("GET /debug/subscriptions", func(w http.ResponseWriter, req *http.Request) {
		s, err := r.Subscriptions(req.Context(), req.URL.Query().Get("filters") != "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(s)
	})
	return mux
}
