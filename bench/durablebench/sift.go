package durablebench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/local"
)

// pubend is the name of the one pubend, hosted by r0.
const pubend = "p"

// Sift is Sift's durable mesh in one process: routers linked over QUIC on
// loopback with TLS 1.3 (each router dials its parent in the topology),
// durable delivery on, every router a member, pubend "p" at r0, stores in
// Pebble with synced commits.
//
// With Replicas above 1, pubend "p" is replicated with Raft
// (docs/replication.md) on r0 and Replicas-1 more routers (x1, x2, ...)
// that dial r0; publishers list the replicas' routers and publish at the
// leader, and an acknowledgement means synced on a majority.
type Sift struct {
	// SubQueue bounds each subscriber session's unacknowledged events
	// (router.DurableConfig.SubQueue; 0: the router's default).
	SubQueue int
	// Replicas replicates the pubend on this many routers (0 or 1: not
	// replicated).
	Replicas int
}

// Name returns "sift", or "sift-rN" with N replicas.
func (s Sift) Name() string { return replicatedName("sift", s.Replicas) }

// replicatedName is a system's name, with "-rN" for N > 1 replicas.
func replicatedName(base string, replicas int) string {
	if replicas > 1 {
		return fmt.Sprintf("%s-r%d", base, replicas)
	}
	return base
}

// Replicated returns the system with its pubend (or stream) on n
// replicas.
func (s Sift) Replicated(n int) System { s.Replicas = n; return s }

// Start starts the routers in topology order and waits until every link
// is up.
func (s Sift) Start(ctx context.Context, topo Topology, dir string) (Cluster, error) {
	certDir := filepath.Join(dir, "certs")
	if err := certs.Init(certDir, nil); err != nil {
		return nil, fmt.Errorf("sift: %w", err)
	}
	sc := &siftCluster{topo: topo, certDir: certDir, dir: dir, subQueue: s.SubQueue}
	n := topo.Routers()
	for i := range n {
		sc.names = append(sc.names, fmt.Sprintf("r%d", i))
	}
	if s.Replicas > 1 {
		sc.replicas = []string{sc.names[0]}
		for i := 1; i < s.Replicas; i++ {
			sc.names = append(sc.names, fmt.Sprintf("x%d", i))
			sc.replicas = append(sc.replicas, sc.names[n+i-1])
		}
		n = len(sc.names)
	}
	sc.envs, sc.addrs = make([]*local.Env, n), make([]string, n)
	for i := range n {
		if err := sc.start(i); err != nil {
			sc.Close()
			return nil, err
		}
	}
	if err := sc.waitLinks(ctx); err != nil {
		sc.Close()
		return nil, err
	}
	return sc, nil
}

type siftCluster struct {
	topo     Topology
	certDir  string
	dir      string
	subQueue int
	names    []string
	addrs    []string // fixed after the first start, so restarts keep them
	replicas []string // the routers holding the pubend's replicas (none: r0 hosts it)

	mu   sync.Mutex
	envs []*local.Env
	pubs []*siftPublisher
	subs []*siftSubscriber
}

// parent is the router that router i dials: the one before it on the
// chain; the second SHB dials the router before the first SHB; an extra
// replica's router dials r0.
func (sc *siftCluster) parent(i int) int {
	if i >= sc.topo.Routers() {
		return 0 // an extra replica's router
	}
	if i < sc.topo.Hops {
		return i - 1
	}
	return sc.topo.Hops - 2
}

// start starts router i (again, on its first address and store).
func (sc *siftCluster) start(i int) error {
	var peers []string
	if p := sc.parent(i); p >= 0 {
		peers = []string{sc.addrs[p]}
	}
	env, err := local.StartIn(sc.certDir, filepath.Join(sc.dir, sc.names[i]), func(c *router.Config) {
		c.Name = sc.names[i]
		if sc.addrs[i] != "" {
			c.Listen = sc.addrs[i]
		}
		c.MaxLinks = 4
		c.Peers = peers
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		c.Durable = &router.DurableConfig{Pubends: map[string]string{pubend: sc.names[0]}, Members: sc.names,
			SubQueue: sc.subQueue}
		if len(sc.replicas) > 0 {
			c.Durable.Pubends = map[string]string{}
			c.Durable.Replicas = map[string][]string{pubend: sc.replicas}
		}
	})
	if err != nil {
		return fmt.Errorf("sift: router %s: %w", sc.names[i], err)
	}
	sc.mu.Lock()
	sc.envs[i], sc.addrs[i] = env, env.Addr
	sc.mu.Unlock()
	return nil
}

// waitLinks polls every router's routes until each has its neighbours.
func (sc *siftCluster) waitLinks(ctx context.Context) error {
	want := make([]int, len(sc.envs))
	for i := 1; i < len(sc.envs); i++ {
		want[i]++
		want[sc.parent(i)]++
	}
	for i := range sc.envs {
		if err := sc.waitRouter(ctx, i, want[i]); err != nil {
			return err
		}
	}
	return nil
}

func (sc *siftCluster) waitRouter(ctx context.Context, i, want int) error {
	for {
		routes, err := sc.env(i).Router.Routes(ctx)
		if err != nil {
			return fmt.Errorf("sift: routes of %s: %w", sc.names[i], err)
		}
		if len(routes) >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sift: %s has %d of %d links: %w", sc.names[i], len(routes), want, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (sc *siftCluster) env(i int) *local.Env {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.envs[i]
}

// StopSHB stops SHB shb's router; its subscribers' libraries keep trying
// to reconnect.
func (sc *siftCluster) StopSHB(shb int) error {
	i := sc.topo.SHB(shb)
	sc.mu.Lock()
	env := sc.envs[i]
	sc.envs[i] = nil
	sc.mu.Unlock()
	if env == nil {
		return fmt.Errorf("sift: %s is not running", sc.names[i])
	}
	if err := env.Stop(); err != nil {
		return fmt.Errorf("sift: stop %s: %w", sc.names[i], err)
	}
	return nil
}

// StartSHB starts SHB shb's router again on its address and store, and
// waits until its link is up.
func (sc *siftCluster) StartSHB(ctx context.Context, shb int) error {
	i := sc.topo.SHB(shb)
	var err error
	for range 50 { // the UDP port may take a moment to be free again
		if err = sc.start(i); err == nil {
			return sc.waitRouter(ctx, i, 1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Close closes the clients, then stops the routers from the last.
func (sc *siftCluster) Close() error {
	sc.mu.Lock()
	pubs, subs := sc.pubs, sc.subs
	sc.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
	for _, p := range pubs {
		p.Close()
	}
	var errs []error
	for i := len(sc.envs) - 1; i >= 0; i-- {
		if env := sc.env(i); env != nil {
			if err := env.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("sift: stop %s: %w", sc.names[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// Trace renders one line of every running router's durable counters (LD,
// nacks, answers pending, dropped link messages), for following a phase
// as it runs (SIFT_BENCH_TRACE).
func (sc *siftCluster) Trace(ctx context.Context) string {
	var b strings.Builder
	for i := range sc.envs {
		env := sc.env(i)
		if env == nil {
			fmt.Fprintf(&b, " %s:down", sc.names[i])
			continue
		}
		st, err := env.Router.Durable(ctx)
		if err != nil {
			fmt.Fprintf(&b, " %s:%v", sc.names[i], err)
			continue
		}
		fmt.Fprintf(&b, " %s[", sc.names[i])
		for _, p := range st.Pubends {
			fmt.Fprintf(&b, "ld=%d ann=%d pend=%d ", p.LatestDelivered%100_000_000, p.LastAnnounced%100_000_000, p.AnswersPending)
		}
		fmt.Fprintf(&b, "nfb=%d nup=%d nans=%d drop=%.0f snack=%d cnack=%d cov=%d decl=%d ovf=%d dlv=%d open=%d/%d behind=%d steps=%d]",
			st.NacksFromBelow, st.NacksUpstream, st.NacksAnswered, st.LinkDropped, st.SHB.StreamNacks, st.SHB.CatchupNack,
			st.SHB.CatchupCovers, st.SHB.CoverDeclines, st.SHB.Overflows, st.SHB.Delivered, st.SHB.OpenedBehind, st.SHB.Opened,
			st.SHB.BehindRecords, st.SHB.CatchupSteps)
	}
	return b.String()
}

// Diagnose renders every router's /debug/durable status, for a stalled
// run's error.
func (sc *siftCluster) Diagnose(ctx context.Context) string {
	var b strings.Builder
	for i := range sc.envs {
		env := sc.env(i)
		if env == nil {
			fmt.Fprintf(&b, "%s: stopped\n", sc.names[i])
			continue
		}
		st, err := env.Router.Durable(ctx)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", sc.names[i], err)
			continue
		}
		js, _ := json.Marshal(st)
		fmt.Fprintf(&b, "%s: %s\n", sc.names[i], js)
	}
	return b.String()
}
