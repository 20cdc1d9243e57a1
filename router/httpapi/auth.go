package httpapi

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// LoadTokens reads a bearer token file: one "TOKEN CLIENT" pair a line
// (white-space separated), blank lines and lines starting with # ignored.
// A token given twice, or a line without exactly two fields, is an error
// naming the line.
func LoadTokens(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	return parseTokens(path, data)
}

func parseTokens(path string, data []byte) (map[string]string, error) {
	tokens := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			return nil, fmt.Errorf("tokens %s:%d: want TOKEN CLIENT, found %d fields", path, line, len(f))
		}
		if _, dup := tokens[f[0]]; dup {
			return nil, fmt.Errorf("tokens %s:%d: token given twice", path, line)
		}
		tokens[f[0]] = f[1]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokens %s: %w", path, err)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("tokens %s: no token", path)
	}
	return tokens, nil
}

// handlerFunc is a /v1 handler, told the authenticated client's name.
type handlerFunc func(w http.ResponseWriter, r *http.Request, client string)

// auth authenticates a request by its bearer token (Authorization header,
// or the access_token query parameter for EventSource) when the gateway
// has tokens, and hands it on with the client's name: the token's, else
// the common name of a TLS client certificate (the server verified it),
// else "http".
func (g *Gateway) auth(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.checkOrigin(w, r) { // origin.go
			return
		}
		if g.cfg.Tokens == nil {
			name := anonymous
			if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
				name = r.TLS.PeerCertificates[0].Subject.CommonName // mutual TLS
			}
			h(w, r, name)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			tok = r.URL.Query().Get("access_token")
		}
		name, found := g.lookupToken(tok)
		if !found {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sift"`)
			httpError(w, http.StatusUnauthorized, "a valid bearer token is required (Authorization: Bearer TOKEN, or ?access_token=TOKEN)", nil)
			return
		}
		h(w, r, name)
	})
}

// lookupToken finds tok's client, comparing in constant time per token.
func (g *Gateway) lookupToken(tok string) (string, bool) {
	if tok == "" {
		return "", false
	}
	name, found := "", false
	for t, n := range g.cfg.Tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			name, found = n, true
		}
	}
	return name, found
}

// httpError answers with status and a JSON object {"error": msg} plus
// extra fields.
func httpError(w http.ResponseWriter, status int, msg string, extra map[string]any) {
	body := map[string]any{"error": msg}
	for k, v := range extra {
		body[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// permit returns the permission check in force: Config.Permit, else the
// router's table, else nil (everything allowed).
func (g *Gateway) permit() Permit {
	if g.cfg.Permit != nil {
		return g.cfg.Permit
	}
	if t := g.cfg.Router.Permissions(); t != nil {
		return t
	}
	return nil
}
