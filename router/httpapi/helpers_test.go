package httpapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/local"
)

// testGateway is a router (durable delivery on, pubend named after it)
// with its gateway behind an httptest server.
type testGateway struct {
	t    *testing.T
	env  *local.Env
	gw   *Gateway
	srv  *httptest.Server
	dir  string
	name string
	// h2 serves over TLS with HTTP/2 (startGatewayH2); client is the
	// HTTP client for srv.
	h2     bool
	client *http.Client
}

// startGateway starts router "r1" in a fresh folder with its gateway;
// mod adjusts the router and gateway configurations.
func startGateway(t *testing.T, rmod func(*router.Config), gmod func(*Config)) *testGateway {
	t.Helper()
	dir := t.TempDir()
	tg := &testGateway{t: t, dir: dir, name: "r1"}
	env, err := local.Start(dir, tg.routerConfig(rmod))
	if err != nil {
		t.Fatal(err)
	}
	tg.env = env
	tg.startHTTP(gmod)
	t.Cleanup(tg.stop)
	return tg
}

func (tg *testGateway) routerConfig(rmod func(*router.Config)) func(*router.Config) {
	return func(c *router.Config) {
		c.Name = tg.name
		c.Durable = &router.DurableConfig{Pubends: map[string]string{tg.name: tg.name}, Members: []string{tg.name}}
		if rmod != nil {
			rmod(c)
		}
	}
}

func (tg *testGateway) startHTTP(gmod func(*Config)) {
	cfg := Config{Router: tg.env.Router, TLS: nodeTLS(tg.t, tg.env.CertsDir)}
	if gmod != nil {
		gmod(&cfg)
	}
	gw, err := New(cfg)
	if err != nil {
		tg.t.Fatal(err)
	}
	tg.gw = gw
	tg.srv = httptest.NewUnstartedServer(gw.Handler())
	if tg.h2 {
		tg.srv.EnableHTTP2 = true
		tg.srv.StartTLS()
	} else {
		tg.srv.Start()
	}
	tg.client = tg.srv.Client()
}

// startGatewayH2 is startGateway with the gateway served over HTTPS and
// HTTP/2.
func startGatewayH2(t *testing.T, gmod func(*Config)) *testGateway {
	t.Helper()
	dir := t.TempDir()
	tg := &testGateway{t: t, dir: dir, name: "r1", h2: true}
	env, err := local.Start(dir, tg.routerConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	tg.env = env
	tg.startHTTP(gmod)
	t.Cleanup(tg.stop)
	return tg
}

// stop stops the HTTP server, the gateway and the router (idempotent).
func (tg *testGateway) stop() {
	if tg.srv != nil {
		tg.srv.CloseClientConnections()
		tg.srv.Close()
		tg.srv = nil
	}
	if tg.gw != nil {
		tg.gw.Close()
		tg.gw = nil
	}
	if tg.env != nil {
		tg.env.Stop()
		tg.env = nil
	}
}

// restart stops everything and starts the router again on the same
// certificates and data folder, with a new gateway.
func (tg *testGateway) restart(rmod func(*router.Config), gmod func(*Config)) {
	tg.t.Helper()
	tg.stop()
	env, err := local.StartIn(filepath.Join(tg.dir, "certs"), filepath.Join(tg.dir, "data"), tg.routerConfig(rmod))
	if err != nil {
		tg.t.Fatal(err)
	}
	tg.env = env
	tg.startHTTP(gmod)
}

// post sends a publish request and returns the status and the decoded
// JSON answer.
func (tg *testGateway) post(query, contentType, body string, hdr map[string]string) (int, map[string]any) {
	tg.t.Helper()
	req, err := http.NewRequest("POST", tg.srv.URL+"/v1/publish"+query, strings.NewReader(body))
	if err != nil {
		tg.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := tg.client.Do(req)
	if err != nil {
		tg.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		tg.t.Fatalf("publish answer %d is not JSON: %q", res.StatusCode, data)
	}
	return res.StatusCode, out
}

// mustPublish publishes JSON Lines and checks {"accepted":n}.
func (tg *testGateway) mustPublish(query, body string, n int) {
	tg.t.Helper()
	code, out := tg.post(query, "application/x-ndjson", body, nil)
	if code != 200 || out["accepted"] != float64(n) {
		tg.t.Fatalf("publish: %d %v, want 200 {accepted:%d}", code, out, n)
	}
}

// sseMsg is one Server-Sent Events message.
type sseMsg struct {
	event, id, data string
	hasID           bool
}

// sseStream reads an SSE response.
type sseStream struct {
	t    *testing.T
	res  *http.Response
	msgs chan sseMsg
	// comments counts comment lines (keep-alives after the first).
	comments chan string
	cancel   context.CancelFunc
}

// subscribe opens GET /v1/subscribe with query (already escaped) and
// headers, waits for the ": subscribed" comment, and returns the stream;
// a non-200 answer returns the status and body instead.
func (tg *testGateway) subscribe(query string, hdr map[string]string) (*sseStream, int, string) {
	tg.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", tg.srv.URL+"/v1/subscribe?"+query, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := tg.client.Do(req)
	if err != nil {
		cancel()
		tg.t.Fatal(err)
	}
	if res.StatusCode != 200 {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		return nil, res.StatusCode, string(body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		tg.t.Fatalf("subscribe: Content-Type %q", ct)
	}
	s := &sseStream{t: tg.t, res: res, msgs: make(chan sseMsg, 10000), comments: make(chan string, 100), cancel: cancel}
	go s.read()
	select {
	case c := <-s.comments:
		if c != " subscribed" {
			tg.t.Fatalf("first comment %q, want ' subscribed'", c)
		}
	case <-time.After(10 * time.Second):
		tg.t.Fatal("no ': subscribed' comment within 10s")
	}
	tg.t.Cleanup(s.close)
	return s, 200, ""
}

// mustSubscribe is subscribe that must succeed.
func (tg *testGateway) mustSubscribe(query string, hdr map[string]string) *sseStream {
	tg.t.Helper()
	s, code, body := tg.subscribe(query, hdr)
	if s == nil {
		tg.t.Fatalf("subscribe %s: %d %s", query, code, body)
	}
	return s
}

func (s *sseStream) read() {
	defer close(s.msgs)
	sc := bufio.NewScanner(s.res.Body)
	sc.Buffer(nil, 1<<20)
	var m sseMsg
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if m.data != "" || m.event != "" || m.hasID {
				s.msgs <- m
			}
			m = sseMsg{}
		case strings.HasPrefix(line, ":"):
			select {
			case s.comments <- line[1:]:
			default:
			}
		default:
			field, val, _ := strings.Cut(line, ":")
			val = strings.TrimPrefix(val, " ")
			switch field {
			case "event":
				m.event = val
			case "id":
				m.id, m.hasID = val, true
			case "data":
				if m.data != "" {
					m.data += "\n"
				}
				m.data += val
			}
		}
	}
}

// next returns the next message with data or an event type (id-only
// messages are skipped unless ids is set).
func (s *sseStream) next(ids bool) sseMsg {
	s.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatal("the stream ended")
			}
			if m.data == "" && m.event == "" && !ids {
				continue
			}
			return m
		case <-timeout:
			s.t.Fatal("no SSE message within 20s")
		}
	}
}

// none checks that no data message arrives within d.
func (s *sseStream) none(d time.Duration) {
	s.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-s.msgs:
			if ok && (m.data != "" || m.event != "") {
				s.t.Fatalf("unexpected message %+v", m)
			}
			if !ok {
				return
			}
		case <-deadline:
			return
		}
	}
}

func (s *sseStream) close() {
	s.cancel()
	s.res.Body.Close()
}

func jsonLines(events ...string) string { return strings.Join(events, "\n") + "\n" }

func seqEvents(from, to int, extra string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "{\"seq\":%d%s}\n", i, extra)
	}
	return b.String()
}

// nodeTLS is the TLS configuration of the router's own certificate, which
// siftd's gateway dials with (the router exempts it from permissions).
func nodeTLS(t *testing.T, certDir string) *tls.Config {
	node, err := certs.Load(certDir, certs.Node)
	if err != nil {
		t.Fatal(err)
	}
	return node.ClientConfig()
}
