package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/perm"
)

// prefixPermit lets client "alice" publish and subscribe only on events
// whose topic starts with "alice.".
type prefixPermit struct{}

func (prefixPermit) Publish(client string, ev match.Event) error {
	if v, ok := ev.Get("topic"); ok && strings.HasPrefix(v.AsString(), client+".") {
		return nil
	}
	return errors.New("topic outside " + client + ".*")
}

func (prefixPermit) Subscribe(client string, f match.Filter) error {
	if match.Covers(match.MustParse(`topic prefix "`+client+`."`), f) {
		return nil
	}
	return errors.New("filter not covered by topic prefix " + client + ".")
}

// TestBearerTokens: with tokens, /v1 requests need a valid one (header or
// access_token), the dashboard page does not, and the token's client name
// is what the permission check sees (a refused event is a 403 and
// publishes nothing of its request).
func TestBearerTokens(t *testing.T) {
	tg := startGateway(t, nil, func(c *Config) {
		c.Tokens = map[string]string{"tok-a": "alice", "tok-b": "bob"}
		c.Permit = prefixPermit{}
	})
	do := func(method, path, body string, hdr map[string]string) int {
		req, _ := http.NewRequest(method, tg.srv.URL+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == 401 && res.Header.Get("WWW-Authenticate") == "" {
			t.Fatal("401 without WWW-Authenticate")
		}
		return res.StatusCode
	}
	alice := map[string]string{"Authorization": "Bearer tok-a"}
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
		code               int
	}{
		{"no token", "POST", "/v1/publish", nil, 401},
		{"wrong token", "POST", "/v1/publish", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"not bearer", "POST", "/v1/publish", map[string]string{"Authorization": "Basic dG9rLWE6"}, 401},
		{"status without token", "GET", "/v1/status", nil, 401},
		{"subscribe without token", "GET", "/v1/subscribe?filter=*", nil, 401},
		{"status with token", "GET", "/v1/status", alice, 200},
		{"dashboard is public", "GET", "/", nil, 200},
	} {
		if got := do(c.method, c.path, `{"topic":"alice.x"}`, c.hdr); got != c.code {
			t.Errorf("%s: %d, want %d", c.name, got, c.code)
		}
	}
	s := tg.mustSubscribe("filter="+url.QueryEscape(`topic prefix "alice."`)+"&access_token=tok-a", nil)
	if _, code, body := tg.subscribe("filter="+url.QueryEscape(`topic prefix "alice."`), map[string]string{"Authorization": "Bearer tok-b"}); code != 403 || !strings.Contains(body, "bob") {
		t.Fatalf("bob subscribing to alice's topics: %d %s", code, body)
	}
	code, out := tg.post("", "application/x-ndjson", jsonLines(`{"topic":"alice.1"}`, `{"topic":"bob.1"}`), alice)
	if code != 403 || !strings.Contains(out["error"].(string), "event 2") {
		t.Fatalf("alice publishing to bob's topic: %d %v", code, out)
	}
	code, out = tg.post("", "application/x-ndjson", `{"topic":"alice.2"}`, alice)
	if code != 200 {
		t.Fatalf("alice publishing: %d %v", code, out)
	}
	if m := s.next(false); m.data != `{"topic":"alice.2"}` {
		t.Fatalf("got %+v, want alice.2 only (the refused request published nothing)", m)
	}
}

// TestLoadTokens: the token file's format and its errors.
func TestLoadTokens(t *testing.T) {
	got, err := parseTokens("f", []byte("# comment\n\ntok-a alice\n  tok-b   bob  \n"))
	if err != nil || len(got) != 2 || got["tok-a"] != "alice" || got["tok-b"] != "bob" {
		t.Fatalf("%v %v", got, err)
	}
	for text, want := range map[string]string{
		"tok-a alice\ntok-a bob\n": "f:2: token given twice",
		"tok-a\n":                  "f:1: want TOKEN CLIENT, found 1 fields",
		"a b c\n":                  "f:1: want TOKEN CLIENT, found 3 fields",
		"# nothing\n":              "no token",
	} {
		if _, err := parseTokens("f", []byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// TestOrigins: a browser request from a foreign origin is refused, one
// from an allowed origin gets CORS headers (preflight included), and
// requests without Origin (curl) or from the gateway's own origin pass.
func TestOrigins(t *testing.T) {
	tg := startGateway(t, nil, func(c *Config) { c.Origins = []string{"http://localhost:8000"} })
	do := func(method, path, origin string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(method, tg.srv.URL+path, strings.NewReader(`{"a":1}`))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := do("POST", "/v1/publish", "https://evil.example", nil); res.StatusCode != 403 {
		t.Fatalf("foreign origin: %d", res.StatusCode)
	}
	if res := do("GET", "/v1/status", "https://evil.example", nil); res.StatusCode != 403 {
		t.Fatalf("foreign origin status: %d", res.StatusCode)
	}
	if res := do("POST", "/v1/publish", "", nil); res.StatusCode != 200 {
		t.Fatalf("no origin: %d", res.StatusCode)
	}
	if res := do("POST", "/v1/publish", tg.srv.URL, nil); res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("own origin: %d %v", res.StatusCode, res.Header)
	}
	res := do("POST", "/v1/publish", "http://localhost:8000", nil)
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "http://localhost:8000" {
		t.Fatalf("allowed origin: %d %v", res.StatusCode, res.Header)
	}
	res = do("OPTIONS", "/v1/publish", "http://localhost:8000", map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
	if res.StatusCode != 204 || !strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
	if res := do("OPTIONS", "/v1/publish", "https://evil.example", nil); res.StatusCode != 403 {
		t.Fatalf("foreign preflight: %d", res.StatusCode)
	}
}

// TestRouterPermissions: without Config.Permit the gateway applies the
// router's permissions table to the client its bearer token names, for
// plain and durable requests alike; anonymous requests act as client
// "http", which the table does not list.
func TestRouterPermissions(t *testing.T) {
	table, err := perm.Parse([]byte(`{"alice": {"publish": "topic prefix \"alice.\"", "subscribe": "topic prefix \"alice.\""}}`))
	if err != nil {
		t.Fatal(err)
	}
	tg := startGateway(t, func(c *router.Config) { c.Permissions = table }, func(c *Config) {
		c.Tokens = map[string]string{"tok-a": "alice", "tok-x": "mallory"}
	})
	alice := map[string]string{"Authorization": "Bearer tok-a"}
	mallory := map[string]string{"Authorization": "Bearer tok-x"}
	s := tg.mustSubscribe("filter="+url.QueryEscape(`topic prefix "alice.x"`), alice)
	if _, code, _ := tg.subscribe("filter="+url.QueryEscape(`topic exists`), alice); code != 403 {
		t.Fatalf("alice beyond her filter: %d", code)
	}
	if _, code, _ := tg.subscribe("filter="+url.QueryEscape(`topic prefix "alice."`)+"&durable=m1", mallory); code != 403 {
		t.Fatalf("mallory durable: %d", code)
	}
	for _, q := range []string{"", "?durable=1"} {
		if code, out := tg.post(q, "application/x-ndjson", jsonLines(`{"topic":"alice.x1"}`, `{"topic":"bob.1"}`), alice); code != 403 {
			t.Fatalf("alice publishing bob's topic%s: %d %v", q, code, out)
		}
		if code, out := tg.post(q, "application/x-ndjson", `{"topic":"alice.x2"}`, mallory); code != 403 {
			t.Fatalf("mallory%s: %d %v", q, code, out)
		}
	}
	if code, out := tg.post("", "application/x-ndjson", `{"topic":"alice.x3"}`, alice); code != 200 {
		t.Fatalf("alice: %d %v", code, out)
	}
	if m := s.next(false); m.data != `{"topic":"alice.x3"}` {
		t.Fatalf("got %+v, want alice.x3 only", m)
	}
}
