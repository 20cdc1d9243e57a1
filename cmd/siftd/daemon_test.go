package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/certs"
)

// TestDaemonBehaviour: --version and sift version; a config file with an
// unknown key is refused naming it; every setting from SIFT_* variables
// (JSON logs); sift_build_info; /readyz 503 while draining and /healthz;
// the config file's log level re-read on SIGHUP.
func TestDaemonBehaviour(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	if out, err := runBin(t, ctx, nil, "siftd", "--version"); err != nil || !regexp.MustCompile(`^siftd \S+ revision \S+.* go1\.`).MatchString(out) {
		t.Fatalf("siftd --version: %v %q", err, out)
	}
	if out, err := runBin(t, ctx, nil, "sift", "version"); err != nil || !strings.HasPrefix(out, "sift ") || !strings.Contains(out, "revision") {
		t.Fatalf("sift version: %v %q", err, out)
	}
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	cfg := filepath.Join(dir, "siftd.json")
	os.WriteFile(cfg, []byte(`{"name": "r1", "idle_timout": "10s"}`), 0o644)
	if out, err := runBin(t, ctx, nil, "siftd", "--config", cfg, "--certs", certDir, "--data", dir); err == nil || !strings.Contains(out, `unknown field "idle_timout"`) {
		t.Fatalf("config typo: %v\n%s", err, out)
	}
	if out, err := runBin(t, ctx, nil, "siftd", "--name", "r1", "--certs", certDir, "--data", dir, "--log-format", "xml"); err == nil || !strings.Contains(out, `--log-format "xml"`) {
		t.Fatalf("--log-format xml: %v\n%s", err, out)
	}

	os.WriteFile(cfg, []byte(`{"log_level": "info"}`), 0o644)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "siftd"))
	cmd.Env = append(os.Environ(), "SIFT_NAME=r1", "SIFT_LISTEN=127.0.0.1:0", "SIFT_CERTS="+certDir, "SIFT_DATA="+filepath.Join(dir, "data"),
		"SIFT_METRICS=127.0.0.1:0", "SIFT_LOG_FORMAT=json", "SIFT_CONFIG="+cfg, "SIFT_DRAIN_TIMEOUT=5s")
	errPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	await := func(re string) []string {
		t.Helper()
		rx := regexp.MustCompile(re)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("siftd exited before logging %s", re)
				}
				if !strings.HasPrefix(l, "{") {
					t.Fatalf("a log line that is not JSON: %s", l)
				}
				if m := rx.FindStringSubmatch(l); m != nil {
					return m
				}
			case <-ctx.Done():
				t.Fatalf("waiting for %s", re)
			}
		}
	}
	metrics := await(`"msg":"metrics ready","addr":"([^"]+)"`)[1]
	addr := await(`"msg":"router ready".*"addr":"([^"]+)"`)[1]
	get := func(path string) (int, string) {
		res, err := http.Get("http://" + metrics + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("/readyz"); code != 200 {
		t.Fatalf("/readyz %d %s", code, body)
	}
	if _, body := get("/metrics"); !regexp.MustCompile(`sift_build_info\{goversion="go[^"]+",revision="[^"]+",version="[^"]+"\} 1`).MatchString(body) {
		t.Fatalf("no sift_build_info in /metrics")
	}
	// SIGHUP re-reads the config file's log level.
	os.WriteFile(cfg, []byte(`{"log_level": "debug"}`), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	await(`"msg":"log level changed","from":"INFO","to":"DEBUG"`)

	// A client that never reads holds the drain open: /readyz is 503
	// meanwhile, and siftd exits within the drain timeout.
	qc := idleClient(t, ctx, addr, certDir)
	defer qc.CloseWithError(0, "")
	// The router logs this once the connection is handed to its matching
	// loop, which the drain then waits for; a SIGTERM before it would find
	// no client to wait for and siftd would be gone before the checks.
	await(`"msg":"client connected"`)
	began := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	await(`"msg":"draining"`)
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "draining") {
		t.Fatalf("/readyz while draining: %d %s", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz while draining: %d", code)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("siftd after SIGTERM: %v", err)
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("drain took %v with --drain-timeout 5s", took)
	}
}

// idleClient connects as a client and then neither reads nor closes.
func idleClient(t *testing.T, ctx context.Context, addr, certDir string) *quic.Conn {
	t.Helper()
	cl, err := certs.Load(certDir, certs.Client)
	if err != nil {
		t.Fatal(err)
	}
	tc := cl.ClientConfig()
	tc.ServerName = "localhost"
	qc, err := quic.DialAddr(ctx, addr, tc, &quic.Config{MaxIdleTimeout: time.Minute, KeepAlivePeriod: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Write(wire.AppendFrame(nil, &wire.Hello{MinVersion: wire.Version, MaxVersion: wire.Version, Role: wire.RoleClient, Name: "idle"}))
	if _, err := wire.NewFrameReader(s, wire.HardMaxFrame).ReadMessage(); err != nil {
		t.Fatal(err)
	}
	d, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d.Write(wire.AppendFrame(nil, &wire.Attach{Version: wire.Version}))
	return qc
}

// TestSIGTERMDuringPublish stops siftd with SIGTERM while sift pub is
// sending 300,000 events: sift pub fails saying how many events the
// router accepted, and the subscriber got every one of them (the router
// routes what it read and drains its queues before closing).
func TestSIGTERMDuringPublish(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	r1, addr := startRouter(t, ctx, dir, "r1", certDir, "--drain-timeout", "10s")
	const n = 300000
	events := filepath.Join(dir, "events.jsonl")
	f, _ := os.Create(events)
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, "{\"seq\":%d}\n", i)
	}
	w.Flush()
	f.Close()
	seen := make(chan int, 1<<20)
	seqRE := regexp.MustCompile(`"seq":(\d+)`)
	sub := startLogProc(t, ctx, "sift sub", func(l string) {
		if m := seqRE.FindStringSubmatch(l); m != nil {
			v, _ := strconv.Atoi(m[1])
			seen <- v
		}
	}, "sift", "sub", "--router", addr, "--certs", certDir, "seq exists")
	sub.waitLine(t, ctx, subReady)
	pub := startLogProc(t, ctx, "sift pub", nil, "sift", "pub", "--router", addr, "--certs", certDir, events)
	got := map[int]bool{}
	for len(got) < 1000 {
		select {
		case v := <-seen:
			got[v] = true
		case <-pub.done:
			t.Fatalf("sift pub ended (%v) before the subscriber saw 1000 events (it saw %d):\n%s\nsub:\n%s", pub.err, len(got), pub.log(), sub.log())
		case <-ctx.Done():
			t.Fatalf("subscriber saw %d events before the deadline", len(got))
		}
	}
	if err := r1.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("siftd after SIGTERM: %v\n%s", err, r1.log())
	}
	<-pub.done
	accepted := n
	if pub.err == nil {
		t.Logf("sift pub finished before the SIGTERM took effect; checking all %d", n)
	} else {
		m := regexp.MustCompile(`(\d+) of 300000 events accepted by the router`).FindStringSubmatch(pub.log())
		if m == nil {
			t.Fatalf("sift pub failed without saying how many events were accepted:\n%s", pub.log())
		}
		accepted, _ = strconv.Atoi(m[1])
		t.Logf("sift pub: %s", strings.TrimSpace(pub.log()))
	}
	// sift sub prints what it received at its own pace and stops printing
	// at SIGINT: wait until it has printed every accepted event (or a
	// while), then stop it (it would reconnect).
	wait := time.After(15 * time.Second)
	for printed := countBelow(got, accepted); printed < accepted; {
		select {
		case v := <-seen:
			if !got[v] && v < accepted {
				printed++
			}
			got[v] = true
			continue
		case <-wait:
		}
		break
	}
	sub.stop(syscall.SIGINT)
	close(seen)
	for v := range seen {
		got[v] = true
	}
	for i := range accepted {
		if !got[i] {
			t.Fatalf("event %d was accepted (%d were) but never delivered; the subscriber got %d", i, accepted, len(got))
		}
	}
	t.Logf("%d accepted, %d delivered", accepted, len(got))
}

// countBelow counts the ids below n in got.
func countBelow(got map[int]bool, n int) int {
	c := 0
	for v := range got {
		if v < n {
			c++
		}
	}
	return c
}
