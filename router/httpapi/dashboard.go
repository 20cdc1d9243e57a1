package httpapi

import (
	_ "embed"
	"net/http"
)

// dashboardPage is the dashboard: one static page of plain JavaScript and
// SVG, fed by /v1/status (polled every second) and /v1/subscribe.
//
//go:embed dashboard/index.html
var dashboardPage []byte

// dashboard serves the page at /. It carries no data: the page asks
// /v1/status and /v1/subscribe, which authenticate.
func (g *Gateway) dashboard(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:")
	w.Write(dashboardPage)
}
