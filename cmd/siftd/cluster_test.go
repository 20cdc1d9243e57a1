package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/mesh"
)

// This file is the harness of the multi-process mesh tests: a cluster of
// siftd processes sharing one certificate folder, each with its own data
// folder and metrics address, started on :0 and restartable on the
// address it bound; readiness comes from log lines only.

// clusterConfig is the JSON config every siftd of a cluster reads: short
// idle timeouts so that a killed client or router is noticed within
// seconds (quic-go answers with a stateless reset only to packets larger
// than 42 bytes, and keep-alives are smaller, so an idle peer of a
// crashed process learns of it only by the idle timeout).
const clusterConfig = `{"idle_timeout": "3s", "keepalive": "750ms"}`

var (
	bindErrRE = regexp.MustCompile(`address already in use`)
)

// cluster runs siftd processes for one test.
type cluster struct {
	t       *testing.T
	ctx     context.Context
	dir     string
	certDir string
	config  string   // path of the JSON config ("": none, the defaults)
	extra   []string // flags given to every siftd (the test variant)
	nodes   []*node  // in start order, for failure dumps
}

// node is one siftd of a cluster; its process comes and goes.
type node struct {
	name   string
	listen string // --listen: the bound address once started
	addr   string // QUIC address it bound
	// clientAddr is where clients in its namespace dial it (default addr).
	clientAddr string
	metrics    string   // HTTP address of /metrics and /debug/routes
	peers      []string // --peer addresses
	args       []string // extra flags of this node
	ns         string   // network namespace to run in ("": the test's own)
	p          *logProc
	starts     int
}

// command returns the program and arguments that run binary (built by
// TestMain) with args in n's network namespace.
func (n *node) command(binary string, args ...string) (string, []string) {
	if n.ns == "" {
		return binary, args
	}
	return ipPath, append([]string{"netns", "exec", n.ns, filepath.Join(bin, binary)}, args...)
}

// ipPath is iproute2's ip command.
const ipPath = "/usr/sbin/ip"

// newCluster makes the certificates (with extra host names or addresses
// for the node certificate) and the config file; every siftd gets extra.
func newCluster(t *testing.T, ctx context.Context, extra []string, hosts ...string) *cluster {
	t.Helper()
	c := &cluster{t: t, ctx: ctx, dir: t.TempDir(), extra: extra}
	c.certDir = filepath.Join(c.dir, "certs")
	args := []string{"certs", "init", c.certDir}
	for _, h := range hosts {
		args = append(args, "--host", h)
	}
	if out, err := runBin(t, ctx, nil, "sift", args...); err != nil {
		t.Fatalf("certs init: %v\n%s", err, out)
	}
	c.config = filepath.Join(c.dir, "siftd.json")
	if err := os.WriteFile(c.config, []byte(clusterConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.nodes {
				if n.p != nil {
					t.Logf("stderr of %s (start %d):\n%s", n.name, n.starts, n.p.log())
				}
			}
		}
	})
	return c
}

// start runs a new siftd named name on 127.0.0.1:0 dialling peers, and
// waits until it is ready.
func (c *cluster) start(name string, peers ...*node) *node {
	c.t.Helper()
	n := &node{name: name, listen: "127.0.0.1:0"}
	for _, p := range peers {
		n.peers = append(n.peers, p.addr)
	}
	c.startNode(n)
	return n
}

// startNode runs a node set up by the caller (listen, peers, ns, args).
func (c *cluster) startNode(n *node) {
	c.t.Helper()
	c.nodes = append(c.nodes, n)
	c.run(n)
}

// run starts n's process and waits for its "router ready" line; binding
// its (fixed) address again after a kill is retried while another
// process still holds it.
func (c *cluster) run(n *node) {
	c.t.Helper()
	args := []string{"--name", n.name, "--listen", n.listen, "--certs", c.certDir,
		"--data", filepath.Join(c.dir, n.name), "--metrics", "127.0.0.1:0"}
	if c.config != "" {
		args = append(args, "--config", c.config)
	}
	args = append(append(args, c.extra...), n.args...)
	for _, p := range n.peers {
		args = append(args, "--peer", p)
	}
	for try := 0; ; try++ {
		n.starts++
		prog, argv := n.command("siftd", args...)
		n.p = startLogProc(c.t, c.ctx, "siftd "+n.name, nil, prog, argv...)
		m, err := n.p.awaitLine(c.ctx, metricsRE)
		if err == nil {
			n.metrics = m[1]
			m, err = n.p.awaitLine(c.ctx, readyRE)
		}
		if err == nil {
			n.addr = m[1]
			if strings.HasSuffix(n.listen, ":0") {
				n.listen = n.addr // restart on the port it bound
			}
			if n.clientAddr == "" {
				n.clientAddr = n.addr
			}
			return
		}
		if try == 4 || !bindErrRE.MatchString(n.p.log()) {
			c.t.Fatalf("%v; stderr:\n%s", err, n.p.log())
		}
		c.t.Logf("%s: %s is still taken; retrying", n.name, n.listen)
		select {
		case <-time.After(time.Duration(50<<try) * time.Millisecond):
		case <-c.ctx.Done():
			c.t.Fatal(c.ctx.Err())
		}
	}
}

// restart kills n (SIGKILL) and starts it again on the same address and
// data folder.
func (c *cluster) restart(n *node) {
	c.t.Helper()
	n.p.kill()
	c.run(n)
}

// stopAll stops every running siftd with SIGTERM and checks each exits
// cleanly.
func (c *cluster) stopAll() {
	c.t.Helper()
	for _, n := range c.nodes {
		if err := n.p.stop(syscall.SIGTERM); err != nil {
			c.t.Errorf("%s after SIGTERM: %v\n%s", n.name, err, n.p.log())
		}
	}
}

// waitLinks waits for a "link up" line naming each peer, in any order,
// among the lines of n not looked at yet.
func (c *cluster) waitLinks(n *node, peers ...*node) {
	c.t.Helper()
	want := map[string]bool{}
	for _, p := range peers {
		want[p.name] = true
	}
	for len(want) > 0 {
		delete(want, n.p.waitLine(c.t, c.ctx, linkUpRE)[1])
	}
}

// routes is the body of /debug/routes.
type routes struct {
	Router string            `json:"router"`
	Links  []mesh.LinkRoutes `json:"links"`
}

// link returns the link to peer, if up.
func (r routes) link(peer string) (mesh.LinkRoutes, bool) {
	for _, l := range r.Links {
		if l.Peer == peer {
			return l, true
		}
	}
	return mesh.LinkRoutes{}, false
}

// peers lists the peers of the links up, sorted.
func (r routes) peers() []string {
	var out []string
	for _, l := range r.Links {
		out = append(out, l.Peer)
	}
	slices.Sort(out)
	return out
}

// routes fetches n's /debug/routes.
func (n *node) routes() (routes, error) {
	var r routes
	body, err := n.get("/debug/routes")
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("%s /debug/routes: %w", n.name, err)
	}
	return r, nil
}

// get fetches a path of n's metrics address.
func (n *node) get(path string) ([]byte, error) {
	client := http.DefaultClient
	if n.ns != "" {
		client = netnsHTTPClient(n.ns)
	}
	resp, err := client.Get("http://" + n.metrics + path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", n.name, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %s", n.name, path, resp.Status)
	}
	return body, err
}

// eventually polls cond (every 50 ms: there is no log line for it) until
// it returns nil, and fails the test with its last error when ctx ends.
// Use it only for state with no event to wait on, such as /debug/routes.
func eventually(t *testing.T, ctx context.Context, what string, cond func() error) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%s: %v (gave up: %v)", what, err, ctx.Err())
		}
	}
}

// emptyRoutes checks that no link of n forwards or holds any filter.
func emptyRoutes(n *node) error {
	r, err := n.routes()
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range r.Links {
		if len(l.Forwarded) > 0 || len(l.Received) > 0 {
			errs = append(errs, fmt.Errorf("%s link %s: forwarded %q, received %q", n.name, l.Peer, l.Forwarded, l.Received))
		}
	}
	return errors.Join(errs...)
}
