package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// bin holds the siftd and sift binaries built once for the tests.
var bin string

func TestMain(m *testing.M) {
	if os.Getenv(rogueEnv) != "" { // rogue_test.go: this process is a hostile peer
		os.Exit(rogueMain())
	}
	dir, err := os.MkdirTemp("", "siftd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	for _, pkg := range []string{"github.com/sift-pubsub/sift/cmd/siftd", "github.com/sift-pubsub/sift/cmd/sift"} {
		out, err := exec.Command("go", "build", "-o", dir, pkg).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running binary whose stderr lines arrive on a channel.
type proc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	lines  chan string
	stderr []string // every line read so far, for failure messages
}

func startProc(t *testing.T, ctx context.Context, name string, args ...string) *proc {
	t.Helper()
	return startCommand(t, ctx, filepath.Join(bin, name), args...)
}

// startProcIn is startProc inside network namespace ns ("": the test's
// own). ip netns exec execs the binary, so the process is the binary's.
func startProcIn(t *testing.T, ctx context.Context, ns, name string, args ...string) *proc {
	t.Helper()
	if ns == "" {
		return startProc(t, ctx, name, args...)
	}
	return startCommand(t, ctx, ipPath, append([]string{"netns", "exec", ns, filepath.Join(bin, name)}, args...)...)
}

// startCommand starts path with args; its stderr lines arrive on lines.
func startCommand(t *testing.T, ctx context.Context, path string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.CommandContext(ctx, path, args...), lines: make(chan string, 1024)}
	p.cmd.Stdout = &p.stdout
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p
}

// waitLine reads stderr until a line matches re and returns the match.
func (p *proc) waitLine(t *testing.T, ctx context.Context, re *regexp.Regexp) []string {
	t.Helper()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("%s exited before printing %q; stderr:\n%s", p.cmd.Path, re, strings.Join(p.stderr, "\n"))
			}
			p.stderr = append(p.stderr, line)
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %q: %v; stderr:\n%s", re, ctx.Err(), strings.Join(p.stderr, "\n"))
		}
	}
}

// wait waits for exit, draining stderr, and returns the error and stderr.
func (p *proc) wait() (string, error) {
	for line := range p.lines {
		p.stderr = append(p.stderr, line)
	}
	err := p.cmd.Wait()
	return strings.Join(p.stderr, "\n"), err
}

func runBin(t *testing.T, ctx context.Context, stdin io.Reader, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

// initCerts writes a deployment CA and the development router and client
// certificates into dir with sift certs init, as most multi-process tests
// need.
func initCerts(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	if out, err := runBin(t, ctx, nil, "sift", "certs", "init", dir); err != nil {
		t.Fatalf("certs init: %v\n%s", err, out)
	}
}

var (
	readyRE   = regexp.MustCompile(`msg="router ready".* addr=(\S+)`)
	metricsRE = regexp.MustCompile(`msg="metrics ready" addr=(\S+)`)
	subReady  = regexp.MustCompile(`^ready$`)
)

// TestEndToEnd runs siftd, several `sift sub` and one `sift pub` as
// separate processes on loopback, and checks every subscriber's output
// against Scan over the published events.
func TestEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	d := startProc(t, ctx, "siftd", "--name", "r1", "--listen", "127.0.0.1:0", "--certs", certDir,
		"--data", filepath.Join(dir, "data"), "--metrics", "127.0.0.1:0")
	metricsAddr := d.waitLine(t, ctx, metricsRE)[1]
	addr := d.waitLine(t, ctx, readyRE)[1]

	w, err := workload.Stock(workload.StockConfig{Subscriptions: 200, Events: 3000}, 7)
	if err != nil {
		t.Fatal(err)
	}
	eventsFile := filepath.Join(dir, "events.jsonl")
	var buf bytes.Buffer
	match.WriteEvents(&buf, w.Events)
	os.WriteFile(eventsFile, buf.Bytes(), 0o644)

	filters := pickFilters(w)
	type subProc struct {
		filter string
		want   []match.Event
		p      *proc
	}
	var subs []subProc
	for _, f := range filters {
		want := scanMatches(f, w.Events)
		args := []string{"sub", "--router", addr, "--certs", certDir, "--timeout", "60s", "--count", fmt.Sprint(len(want)), f.String()}
		if len(want) == 0 {
			args = []string{"sub", "--router", addr, "--certs", certDir, "--timeout", "1s", f.String()}
		}
		p := startProc(t, ctx, "sift", args...)
		p.waitLine(t, ctx, subReady)
		subs = append(subs, subProc{f.String(), want, p})
	}
	out, err := runBin(t, ctx, nil, "sift", "pub", "--router", addr, "--certs", certDir, eventsFile)
	if err != nil || out != "published 3000 events\n" {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	for _, s := range subs {
		stderr, err := s.p.wait()
		if err != nil {
			t.Fatalf("sub %q: %v\n%s", s.filter, err, stderr)
		}
		got, err := parseSubOutput(s.p.stdout.String())
		if err != nil {
			t.Fatalf("sub %q: %v", s.filter, err)
		}
		if err := sameEvents(got, s.want); err != nil {
			t.Errorf("sub %q: %v", s.filter, err)
		}
	}
	checkHTTP(t, metricsAddr)
	checkBadInput(t, ctx, addr, certDir, dir)

	d.cmd.Process.Signal(syscall.SIGTERM)
	if stderr, err := d.wait(); err != nil || !strings.Contains(stderr, `msg="router stopped"`) {
		t.Fatalf("siftd after SIGTERM: %v\n%s", err, stderr)
	}
}

// pickFilters takes workload subscriptions of different shapes (some
// matching many events, some few), plus one that matches nothing.
func pickFilters(w workload.Workload) []match.Filter {
	seen := map[int]bool{}
	var out []match.Filter
	for _, f := range w.Filters {
		n := len(scanMatches(f, w.Events))
		bucket := min(n/5, 4)
		if n > 0 && !seen[bucket] && len(out) < 4 {
			seen[bucket] = true
			out = append(out, f)
		}
	}
	return append(out, match.MustParse(`symbol == "NO-SUCH-SYMBOL"`))
}

func scanMatches(f match.Filter, evs []match.Event) []match.Event {
	scan := match.NewScan()
	scan.Insert(1, f)
	var out []match.Event
	for _, e := range evs {
		if len(scan.Match(e, nil)) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// parseSubOutput reads `{"event":{...}}` lines.
func parseSubOutput(s string) ([]match.Event, error) {
	var out []match.Event
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		inner, ok := strings.CutPrefix(line, `{"event":`)
		inner, ok2 := strings.CutSuffix(inner, "}")
		if !ok || !ok2 {
			return nil, fmt.Errorf("line %q is not {\"event\":{...}}", line)
		}
		e, err := match.ParseEventJSON([]byte(inner))
		if err != nil {
			return nil, fmt.Errorf("line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func sameEvents(got, want []match.Event) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			return fmt.Errorf("event %d: got %v, want %v", i, got[i], want[i])
		}
	}
	return nil
}

func checkHTTP(t *testing.T, addr string) {
	t.Helper()
	for path, want := range map[string]string{
		"/healthz":             "ok",
		"/metrics":             "sift_router_events_in_total 3000",
		"/debug/subscriptions": `"router": "r1"`,
	} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %s, want %q in:\n%s", path, resp.Status, want, body)
		}
	}
}

// checkBadInput: a malformed event publishes nothing; a malformed filter is
// refused naming the column; a client with another deployment's
// certificate is refused at the handshake. The router keeps serving.
func checkBadInput(t *testing.T, ctx context.Context, addr, certDir, dir string) {
	t.Helper()
	out, err := runBin(t, ctx, strings.NewReader("{\"a\":1}\n{\"a\":[1]}\n"), "sift", "pub", "--router", addr, "--certs", certDir)
	if err == nil || !strings.Contains(out, "stdin:2") {
		t.Errorf("pub of a malformed event: %v\n%s", err, out)
	}
	out, err = runBin(t, ctx, nil, "sift", "sub", "--router", addr, "--certs", certDir, `price < `)
	if err == nil || !strings.Contains(out, "bad-filter") || !strings.Contains(out, "col 9") {
		t.Errorf("sub with a malformed filter: %v\n%s", err, out)
	}
	other := filepath.Join(dir, "other")
	initCerts(t, ctx, other)
	// Trust the real router, but present a client certificate of another CA.
	caPEM, _ := os.ReadFile(filepath.Join(certDir, "ca.pem"))
	os.WriteFile(filepath.Join(other, "ca.pem"), caPEM, 0o644)
	out, err = runBin(t, ctx, strings.NewReader("{\"a\":1}\n"), "sift", "pub", "--router", addr, "--certs", other, "--dial-timeout", "5s")
	if err == nil || strings.Contains(out, "published") {
		t.Errorf("a client with a foreign certificate published: %v\n%s", err, out)
	}
	out, err = runBin(t, ctx, strings.NewReader("{\"a\":1}\n"), "sift", "pub", "--router", addr, "--certs", certDir)
	if err != nil || out != "published 1 events\n" {
		t.Errorf("router unusable after bad input: %v\n%s", err, out)
	}
}

// freeUDPAddr returns a loopback UDP address that was free a moment ago.
// Another process may take it before the caller binds it: prefer starting
// on :0 and reusing the address bound (cluster.run).
func freeUDPAddr(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}
