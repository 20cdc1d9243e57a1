package netbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// Sift forwarding modes between routers.
const (
	// ModeExact forwards an event to a neighbour when it matches one of
	// the filters the neighbour forwarded (exact matching at every hop).
	ModeExact = "exact"
	// ModeBloom has the first router match the event once and send a
	// Bloom summary with it; inner routers forward on the summary
	// (router.Config.Forward "bloom", default parameters and tree).
	ModeBloom = "bloom"
)

// SiftModes lists the forwarding modes Sift supports.
func SiftModes() []string { return []string{ModeExact, ModeBloom} }

// Sift is Sift's routers in one process: a chain r0 - r1 - ... linked
// over QUIC on loopback (each router dials the one before it), all with
// TLS 1.3 and client certificates, as Sift always runs.
type Sift struct {
	// Mode is the forwarding mode, one of SiftModes.
	Mode string
}

// Name returns "sift-" and the mode.
func (s Sift) Name() string { return "sift-" + s.Mode }

// Start starts the chain and waits until every link is up.
func (s Sift) Start(ctx context.Context, routers int, dir string) (Cluster, error) {
	if !slices.Contains(SiftModes(), s.Mode) {
		return nil, fmt.Errorf("sift: forwarding mode %q is not available (have %v)", s.Mode, SiftModes())
	}
	certDir := filepath.Join(dir, "certs")
	if err := certs.Init(certDir, nil); err != nil {
		return nil, fmt.Errorf("sift: %w", err)
	}
	cl, err := certs.Load(certDir, certs.Client)
	if err != nil {
		return nil, fmt.Errorf("sift: %w", err)
	}
	sc := &siftCluster{clientCN: cl.Cert.Leaf.Subject.CommonName}
	for i := range routers {
		var peers []string
		if i > 0 {
			peers = []string{sc.envs[i-1].Addr}
		}
		env, err := local.StartIn(certDir, filepath.Join(dir, fmt.Sprintf("data-%d", i)), func(c *router.Config) {
			c.Name = fmt.Sprintf("r%d", i)
			c.MaxLinks = 4
			c.Peers = peers
			c.Forward = s.Mode
			c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		})
		if err != nil {
			sc.Close()
			return nil, fmt.Errorf("sift: router %d: %w", i, err)
		}
		sc.envs = append(sc.envs, env)
	}
	if err := sc.waitLinks(ctx); err != nil {
		sc.Close()
		return nil, err
	}
	return sc, nil
}

type siftCluster struct {
	envs     []*local.Env
	clients  []*client.Client
	clientCN string
}

// waitLinks polls every router's routes until each has its chain
// neighbours (one at the ends, two inside).
func (sc *siftCluster) waitLinks(ctx context.Context) error {
	for i, env := range sc.envs {
		want := min(2, len(sc.envs)-1)
		if i == 0 || i == len(sc.envs)-1 {
			want = min(1, len(sc.envs)-1)
		}
		for {
			routes, err := env.Router.Routes(ctx)
			if err != nil {
				return fmt.Errorf("sift: routes of r%d: %w", i, err)
			}
			if len(routes) >= want {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("sift: r%d has %d of %d links: %w", i, len(routes), want, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

func (sc *siftCluster) dial(ctx context.Context, at int, name string, opts client.Options) (*client.Client, error) {
	if at < 0 || at >= len(sc.envs) {
		return nil, fmt.Errorf("sift: no router %d of %d", at, len(sc.envs))
	}
	c, err := sc.envs[at].Dial(ctx, name, opts)
	if err != nil {
		return nil, fmt.Errorf("sift: %w", err)
	}
	sc.clients = append(sc.clients, c)
	return c, nil
}

// Subscribe connects one client for the subscriber; the router
// acknowledges the subscription once every router of the chain holds it.
func (sc *siftCluster) Subscribe(ctx context.Context, at int, sub workload.NetSub, deliver func(match.Event)) error {
	c, err := sc.dial(ctx, at, fmt.Sprintf("sub-%d", len(sc.clients)), client.Options{
		OnEvent: func(_ *client.Subscription, e match.Event) { deliver(e) },
	})
	if err != nil {
		return err
	}
	if _, err := c.Subscribe(ctx, sub.Filter.String()); err != nil {
		return fmt.Errorf("sift: subscribe %s: %w", sub.Filter, err)
	}
	return nil
}

func (sc *siftCluster) Publisher(ctx context.Context, at int, immediate bool) (Publisher, error) {
	opts := client.Options{}
	if immediate {
		opts.BatchSize = 1
	}
	c, err := sc.dial(ctx, at, fmt.Sprintf("pub-%d", len(sc.clients)), opts)
	if err != nil {
		return nil, err
	}
	return siftPublisher{c}, nil
}

type siftPublisher struct{ c *client.Client }

func (p siftPublisher) Publish(ctx context.Context, e match.Event) error { return p.c.Publish(ctx, e) }
func (p siftPublisher) Flush(ctx context.Context) error                  { return p.c.Flush(ctx) }

// TransportStats is the QUIC connection's packet counters since it
// connected (a TransportReporter).
func (p siftPublisher) TransportStats() TransportStats {
	st := p.c.ConnectionStats()
	return TransportStats{
		PacketsSent: st.PacketsSent, PacketsLost: st.PacketsLost, PacketsReceived: st.PacketsReceived,
		CongestionWindow: st.CongestionWindow, SmoothedRTT: float64(st.SmoothedRTT) / float64(time.Microsecond),
	}
}

// WireBytes sums the routers' connection byte counters: everything each
// router wrote, plus what clients wrote to it (a router-to-router byte is
// counted once, by its sender). These are Sift frames, above QUIC: QUIC
// headers, encryption tags and acknowledgements are not included.
func (sc *siftCluster) WireBytes() (int64, string, bool) {
	var total float64
	for _, env := range sc.envs {
		mfs, err := env.Router.Metrics().Registry.Gather()
		if err != nil {
			return 0, "", false
		}
		for _, mf := range mfs {
			if mf.GetName() != "sift_router_conn_bytes_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["dir"] == "out" || labels["peer"] == sc.clientCN {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int64(total), "sift frames (above QUIC)", true
}

// Close closes the clients, then stops the routers from the last.
func (sc *siftCluster) Close() error {
	var errs []error
	for _, c := range sc.clients {
		c.Close()
	}
	for i := len(sc.envs) - 1; i >= 0; i-- {
		if err := sc.envs[i].Stop(); err != nil {
			errs = append(errs, fmt.Errorf("sift: stop r%d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}
