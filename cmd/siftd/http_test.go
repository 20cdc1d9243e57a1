package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/certs"
)

var httpReadyRE = regexp.MustCompile(`msg="http ready" addr=(\S+)`)

// httpSiftd is one siftd process with --http.
type httpSiftd struct {
	t       *testing.T
	ctx     context.Context
	dir     string
	certDir string
	p       *proc
	addr    string // the HTTP address bound
}

func newHTTPSiftd(t *testing.T, ctx context.Context) *httpSiftd {
	dir := t.TempDir()
	h := &httpSiftd{t: t, ctx: ctx, dir: dir, certDir: filepath.Join(dir, "certs")}
	initCerts(t, ctx, h.certDir)
	return h
}

// start runs siftd with --http on addr and the extra flags, and waits
// until both listeners are ready.
func (h *httpSiftd) start(addr string, extra ...string) {
	args := append([]string{"--name", "r1", "--listen", "127.0.0.1:0", "--certs", h.certDir, "--data", filepath.Join(h.dir, "data"),
		"--member", "r1", "--http", addr}, extra...)
	h.p = startProc(h.t, h.ctx, "siftd", args...)
	h.addr = h.p.waitLine(h.t, h.ctx, httpReadyRE)[1]
	h.p.waitLine(h.t, h.ctx, readyRE)
}

func (h *httpSiftd) kill() {
	h.p.cmd.Process.Kill()
	h.p.wait()
}

// sse reads one SSE stream's messages as "id|event|data" strings.
func sse(t *testing.T, ctx context.Context, client *http.Client, url string, hdr map[string]string) (<-chan string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		cancel()
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	out := make(chan string, 1000)
	ready := make(chan struct{})
	go func() {
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		var id, ev, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == ": subscribed":
				close(ready)
			case line == "":
				if data != "" || ev != "" {
					out <- id + "|" + ev + "|" + data
				}
				id, ev, data = "", "", ""
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("no ': subscribed' within 10s")
	}
	return out, func() { cancel(); res.Body.Close() }
}

func postEvents(t *testing.T, client *http.Client, url, body string) string {
	t.Helper()
	res, err := client.Post(url, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, b)
	}
	return strings.TrimSpace(string(b))
}

func seqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "{\"seq\":%d}\n", i)
	}
	return b.String()
}

// TestHTTPGatewayProcess runs siftd --http as a process: plain publish and
// subscribe over HTTP, then a durable SSE subscriber that resumes with
// Last-Event-ID after siftd was killed (SIGKILL) and restarted on its data
// folder, getting exactly the events published around the crash.
func TestHTTPGatewayProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	h := newHTTPSiftd(t, ctx)
	h.start("127.0.0.1:0")
	defer func() { h.kill() }()
	base := "http://" + h.addr
	c := http.DefaultClient
	plain, stop := sse(t, ctx, c, base+"/v1/subscribe?filter="+url.QueryEscape("seq > 2"), nil)
	if got := postEvents(t, c, base+"/v1/publish", seqLines(1, 4)); got != `{"accepted":4}` {
		t.Fatalf("publish: %s", got)
	}
	for _, want := range []string{`||{"seq":3}`, `||{"seq":4}`} {
		if got := <-plain; got != want {
			t.Fatalf("plain: got %q, want %q", got, want)
		}
	}
	stop()

	durURL := base + "/v1/subscribe?durable=d1&filter=" + url.QueryEscape("seq >= 100")
	dur, stop := sse(t, ctx, c, durURL, nil)
	postEvents(t, c, base+"/v1/publish?durable=1", seqLines(100, 104))
	var last string
	for i := 100; i <= 104; i++ {
		m := <-dur
		id, rest, _ := strings.Cut(m, "|")
		if rest != fmt.Sprintf(`|{"seq":%d}`, i) || id == "" {
			t.Fatalf("durable: got %q, want seq %d with an id", m, i)
		}
		last = id
	}
	time.Sleep(300 * time.Millisecond) // the acknowledgement reaches the SHB
	stop()
	postEvents(t, c, base+"/v1/publish?durable=1", seqLines(105, 107))
	addr := h.addr
	h.kill()
	h.start(addr)
	base = "http://" + h.addr
	postEvents(t, c, base+"/v1/publish?durable=1", seqLines(108, 109))
	dur, stop = sse(t, ctx, c, durURL, map[string]string{"Last-Event-ID": last})
	defer stop()
	for i := 105; i <= 109; i++ {
		m := <-dur
		if _, rest, _ := strings.Cut(m, "|"); rest != fmt.Sprintf(`|{"seq":%d}`, i) {
			t.Fatalf("after the restart: got %q, want seq %d", m, i)
		}
	}
	select {
	case m := <-dur:
		t.Fatalf("unexpected %q after seq 109", m)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestHTTPTLS: --http-tls serves HTTP/2 over TLS with the router's
// certificate and requires a client certificate of the deployment.
func TestHTTPTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := newHTTPSiftd(t, ctx)
	h.start("127.0.0.1:0", "--http-tls")
	defer h.kill()
	cl, err := certs.Load(h.certDir, certs.Client)
	if err != nil {
		t.Fatal(err)
	}
	tc := cl.ClientConfig()
	tc.NextProtos = []string{"h2"}
	tc.ServerName = "localhost"
	tr := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}
	c := &http.Client{Transport: tr}
	res, err := c.Post("https://"+h.addr+"/v1/publish", "application/x-ndjson", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.ProtoMajor != 2 || strings.TrimSpace(string(b)) != `{"accepted":1}` {
		t.Fatalf("%s %d %s", res.Proto, res.StatusCode, b)
	}
	anon := tc.Clone()
	anon.Certificates, anon.GetClientCertificate = nil, nil
	c2 := &http.Client{Transport: &http.Transport{TLSClientConfig: anon, ForceAttemptHTTP2: true}}
	if res, err := c2.Get("https://" + h.addr + "/v1/status"); err == nil {
		res.Body.Close()
		t.Fatalf("no client certificate: %d, want a refused handshake", res.StatusCode)
	}
}

// TestHTTPFlags: an open gateway binds only to loopback unless told.
func TestHTTPFlags(t *testing.T) {
	base := options{Name: "r", Certs: "c", Data: "d"}
	for _, c := range []struct {
		o    httpOptions
		fail string
	}{
		{httpOptions{HTTP: "127.0.0.1:8080"}, ""},
		{httpOptions{HTTP: "[::1]:8080"}, ""},
		{httpOptions{HTTP: "localhost:8080"}, ""},
		{httpOptions{HTTP: ":8080"}, "not a loopback address"},
		{httpOptions{HTTP: "0.0.0.0:8080"}, "not a loopback address"},
		{httpOptions{HTTP: "10.1.2.3:8080"}, "not a loopback address"},
		{httpOptions{HTTP: "0.0.0.0:8080", HTTPInsecure: true}, ""},
		{httpOptions{HTTP: "0.0.0.0:8080", HTTPTLS: true}, ""},
		{httpOptions{HTTP: "0.0.0.0:8080", HTTPTokens: "t"}, ""},
		{httpOptions{HTTPTLS: true}, "need --http"},
		{httpOptions{HTTP: "8080"}, "missing port"},
	} {
		o := base
		o.httpOptions = c.o
		err := resolveHTTP(&o, options{}, func(string) bool { return false })
		if c.fail == "" && err != nil || c.fail != "" && (err == nil || !strings.Contains(err.Error(), c.fail)) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.fail)
		}
	}
}
