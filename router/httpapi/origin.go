package httpapi

import (
	"net/http"
	"net/url"
	"slices"
)

// Browsers send an Origin header with cross-origin requests (and with
// POSTs), curl and programs do not. A web page from another origin could
// otherwise make a visitor's browser publish into, or read from, a gateway
// on the visitor's loopback or intranet: the gateway refuses a request
// whose Origin is neither its own nor one of Config.Origins, and answers
// the allowed ones with CORS headers (preflights included).

// checkOrigin refuses a foreign Origin (403, false) and sets the CORS
// headers for an allowed one.
func (g *Gateway) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || sameOrigin(o, r) {
		return true
	}
	if !slices.Contains(g.cfg.Origins, o) {
		httpError(w, http.StatusForbidden, "cross-origin request from "+o+" refused (siftd --http-origin "+o+" allows it)", nil)
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", o)
	h.Add("Vary", "Origin")
	return true
}

// sameOrigin reports whether origin names the host the request was sent
// to.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// preflight answers CORS preflight requests of allowed origins.
func (g *Gateway) preflight(w http.ResponseWriter, r *http.Request) {
	if !g.checkOrigin(w, r) {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET, POST")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID, Ce-Specversion, Ce-Id, Ce-Source, Ce-Type, Ce-Subject, Ce-Time")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
