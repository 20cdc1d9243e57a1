package main

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// httpConns tracks the HTTP gateway's open connections, so that a
// certificate reload can close those whose client certificate the new CA
// bundle refuses, as router.Revalidate does for links and clients. New
// handshakes already use the reloaded certificates (certs.Store).
type httpConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newHTTPConns() *httpConns { return &httpConns{conns: make(map[net.Conn]struct{})} }

// track is an http.Server ConnState hook.
func (h *httpConns) track(c net.Conn, s http.ConnState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch s {
	case http.StateNew:
		h.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(h.conns, c)
	}
}

// revalidate closes every TLS connection whose peer's certificate verify
// refuses, and returns how many it closed. Connections still in their
// handshake are left to it (it runs on the reloaded certificates).
func (h *httpConns) revalidate(verify func(tls.ConnectionState) error) int {
	h.mu.Lock()
	var refused []net.Conn
	for c := range h.conns {
		tc, ok := c.(*tls.Conn)
		if !ok {
			continue
		}
		if cs := tc.ConnectionState(); cs.HandshakeComplete && verify(cs) != nil {
			refused = append(refused, c)
		}
	}
	h.mu.Unlock()
	for _, c := range refused {
		c.Close()
	}
	return len(refused)
}
