package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sift-pubsub/sift/internal/lossy"
)

// netnsImpairment is the netem setting on both ends of every veth pair of
// TestTreeNetns, when the kernel has netem (sch_netem).
const netnsImpairment = "delay 2ms 1ms loss 1%"

// netnsRelayImpairment is netnsImpairment applied in user space, by a
// lossy relay on each link, when the kernel has no netem.
var netnsRelayImpairment = lossy.Config{Delay: 2 * time.Millisecond, Jitter: time.Millisecond, Loss: 0.01}

// netnsConfig is TestTreeNetns's siftd config: clusterConfig's timeouts,
// plus a short handshake timeout so a dial into a cut link gives up (and
// is redialled) soon after the link is back.
const netnsConfig = `{"idle_timeout": "3s", "keepalive": "750ms", "handshake_timeout": "2s"}`

// TestTreeNetns is TestTree (exact forwarding, poset) with each router in
// its own network namespace, linked by veth pairs over 10.201.i.0/30
// addresses that exist only inside those namespaces, with netem delay and
// loss on every veth when the kernel has netem, and otherwise the same
// delay and loss from a user-space relay (internal/lossy) that each child
// dials its parent through (the test logs which). The outage here is a cut link, not a crash: the veth between r1
// and r2 goes down until both routers log the link lost, both sides
// publish, and the veth comes back up. Clients run in their router's
// namespace and dial it on 127.0.0.1.
//
// It needs root and iproute2 and skips, saying why, without them. It
// takes about as long as one TestTree variant plus the 3 s idle timeout;
// SIFT_NETNS=0 skips it.
func TestTreeNetns(t *testing.T) {
	requireNetns(t)
	t.Parallel()
	prefix := fmt.Sprintf("sift%d", os.Getpid()%100000)
	names := []string{"r1", "r2", "r3", "r4", "r5"}
	ns := map[string]string{}
	for _, n := range names {
		ns[n] = prefix + n
		if out, err := exec.Command(ipPath, "netns", "add", ns[n]).CombinedOutput(); err != nil {
			t.Skipf("cannot make a network namespace: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command(ipPath, "netns", "del", ns[n]).Run() })
		mustIP(t, "-n", ns[n], "link", "set", "lo", "up")
	}
	// Edge i joins child and parent: the child is .2, the parent .1.
	edges := []struct{ child, parent string }{{"r2", "r1"}, {"r3", "r1"}, {"r4", "r2"}, {"r5", "r2"}}
	netem := true
	var hosts []string
	for i, e := range edges {
		cIf, pIf := fmt.Sprintf("%sc%d", prefix, i), fmt.Sprintf("%sp%d", prefix, i)
		mustIP(t, "link", "add", cIf, "netns", ns[e.child], "type", "veth", "peer", "name", pIf, "netns", ns[e.parent])
		for _, end := range []struct{ ns, dev, addr string }{{ns[e.child], cIf, edgeAddr(i, 2)}, {ns[e.parent], pIf, edgeAddr(i, 1)}} {
			mustIP(t, "-n", end.ns, "addr", "add", end.addr+"/30", "dev", end.dev)
			mustIP(t, "-n", end.ns, "link", "set", end.dev, "up")
			if netem {
				args := append([]string{"netns", "exec", end.ns, "tc", "qdisc", "add", "dev", end.dev, "root", "netem"},
					strings.Fields(netnsImpairment)...)
				out, err := exec.Command(ipPath, args...).CombinedOutput()
				if err != nil {
					t.Logf("no netem here (%v: %s): the veths have neither delay nor loss", err, strings.TrimSpace(string(out)))
					netem = false
				}
			}
		}
		hosts = append(hosts, edgeAddr(i, 1))
	}
	if netem {
		t.Logf("netem on every veth end: %s", netnsImpairment)
	}
	parentAddr := func(i int) string { return edgeAddr(i, 1) + ":4433" }
	if !netem {
		relays := startNetnsRelays(t, ns, edges)
		parentAddr = func(i int) string { return relays[i].Addr().String() }
		t.Logf("a lossy relay on every link instead: %v", netnsRelayImpairment)
		defer func() {
			for i, r := range relays {
				t.Logf("relay %s -> %s: %+v", edges[i].child, edges[i].parent, r.Stats())
			}
		}()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	v := treeVariants[0]
	c := newCluster(t, ctx, v.siftd, hosts...)
	c.config = filepath.Join(c.dir, "netns.json")
	if err := os.WriteFile(c.config, []byte(netnsConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]*node{}
	for _, name := range names {
		n := &node{name: name, ns: ns[name], listen: "0.0.0.0:4433", clientAddr: "127.0.0.1:4433"}
		for i, e := range edges {
			if e.child == name {
				n.peers = append(n.peers, parentAddr(i))
			}
		}
		c.startNode(n)
		nodes[name] = n
	}
	tr := tree{nodes["r1"], nodes["r2"], nodes["r3"], nodes["r4"], nodes["r5"]}
	cut := func(state string) {
		mustIP(t, "-n", ns["r2"], "link", "set", prefix+"c0", state)
		mustIP(t, "-n", ns["r1"], "link", "set", prefix+"p0", state)
	}
	testTree(t, ctx, c, tr, v, treeOutage{
		what: "link r1-r2 cut",
		part: map[string]string{"r1": "r1+r3", "r3": "r1+r3", "r2": "r2+r4+r5", "r4": "r2+r4+r5", "r5": "r2+r4+r5"},
		begin: func(c *cluster, tr tree) {
			cut("down")
			tr.r1.p.waitLine(t, ctx, linkDownRE(tr.r2.name))
			tr.r2.p.waitLine(t, ctx, linkDownRE(tr.r1.name))
		},
		end: func(c *cluster, tr tree) {
			cut("up")
			c.waitLinks(tr.r1, tr.r2)
			c.waitLinks(tr.r2, tr.r1)
		},
	})
}

// startNetnsRelays starts, in each edge's child namespace, a lossy relay
// to the parent's address on that edge (closed when the test ends).
func startNetnsRelays(t *testing.T, ns map[string]string, edges []struct{ child, parent string }) []*lossy.Relay {
	t.Helper()
	relays := make([]*lossy.Relay, len(edges))
	for i, e := range edges {
		cfg := netnsRelayImpairment
		cfg.Seed = uint64(i + 1)
		err := inNetns(ns[e.child], func() error {
			var err error
			relays[i], err = lossy.Listen("127.0.0.1:0", edgeAddr(i, 1)+":4433", cfg)
			return err
		})
		if err != nil {
			t.Fatalf("relay %s -> %s: %v", e.child, e.parent, err)
		}
		t.Cleanup(func() { relays[i].Close() })
	}
	return relays
}

// edgeAddr is host h (1 or 2) of edge i's /30.
func edgeAddr(i, h int) string { return fmt.Sprintf("10.201.%d.%d", i+1, h) }

// linkDownRE matches a "link down" line for the link to peer.
func linkDownRE(peer string) *regexp.Regexp {
	return regexp.MustCompile(`msg="link down".* link=` + regexp.QuoteMeta(peer) + `(\s|$)`)
}

// mustIP runs ip with args or fails the test.
func mustIP(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(ipPath, args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// netnsHTTPClient is an HTTP client whose connections are made inside
// network namespace ns (the calling thread enters it for the dial only).
func netnsHTTPClient(ns string) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var conn net.Conn
		err := inNetns(ns, func() error {
			var err error
			conn, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return conn, err
	}
	return &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// inNetns runs fn on a thread that has entered network namespace ns
// (sockets made by fn stay in ns), then returns the thread to its own
// namespace. A thread that cannot return is left locked, so the runtime
// retires it with the goroutine.
func inNetns(ns string, fn func() error) error {
	runtime.LockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer own.Close()
	target, err := os.Open(filepath.Join("/run/netns", ns))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := setns(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", ns, err)
	}
	fnErr := fn()
	if err := setns(own); err != nil {
		return fmt.Errorf("leave netns %s: %w", ns, err) // stays locked
	}
	runtime.UnlockOSThread()
	return fnErr
}

func setns(f *os.File) error { return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET) }

// requireNetns skips t, saying why, where network namespaces cannot be
// made: SIFT_NETNS=0, not root, or no iproute2.
func requireNetns(t *testing.T) {
	t.Helper()
	if os.Getenv("SIFT_NETNS") == "0" {
		t.Skip("SIFT_NETNS=0")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := os.Stat(ipPath); err != nil {
		t.Skipf("network namespaces need iproute2: %v", err)
	}
}
