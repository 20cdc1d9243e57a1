package router

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router/mesh"
	"github.com/sift-pubsub/sift/router/perm"
)

// Config configures a Router. Zero fields take the defaults documented on
// them; Name, TLS and DataDir are required.
type Config struct {
	// Name identifies the router in logs, Welcome frames and, later, to
	// neighbour routers.
	Name string
	// Listen is the UDP address to listen on; default "127.0.0.1:0" (an
	// ephemeral loopback port).
	Listen string
	// TLS is the server TLS configuration, normally certs.Loaded's
	// ServerConfig: TLS 1.3, ALPN sift/1, client certificates required.
	TLS *tls.Config
	// DataDir holds the router's persistent state: for now the QUIC
	// stateless-reset key, so that peers learn of a restart at once.
	DataDir string
	// Index names the match index (match.NewIndex) the matching loop uses;
	// default DefaultIndex().
	Index string
	// MaxSubscriptionsPerConn bounds each connection's subscriptions;
	// default 100000.
	MaxSubscriptionsPerConn int
	// MaxFrame bounds received frames, in bytes; default
	// wire.DefaultMaxFrame, at most wire.HardMaxFrame.
	MaxFrame int
	// SendQueue bounds each connection's queue of undelivered events;
	// past it the connection is closed as a slow consumer. Default 65536.
	SendQueue int
	// ControlQueue bounds each connection's queue of control frames (acks
	// and errors); default 4096.
	ControlQueue int
	// IdleTimeout closes connections silent for this long; default 30s.
	IdleTimeout time.Duration
	// KeepAlive is the keep-alive period; default 10s (at most half the
	// idle timeout, as quic-go enforces).
	KeepAlive time.Duration
	// Heartbeat is the period of the padded heartbeat frames sent on
	// router links (wire.Heartbeat), large enough that a peer which
	// restarted answers with a stateless reset, so a stale link is noticed
	// at once; default 1s or KeepAlive if shorter.
	Heartbeat time.Duration
	// HandshakeTimeout bounds TLS plus the Hello exchange; default 10s.
	HandshakeTimeout time.Duration
	// ShutdownGrace bounds how long Serve, once its context is done, waits
	// for queued deliveries to drain before closing connections; default 2s.
	ShutdownGrace time.Duration
	// MaxLinks bounds the router links up at once. Zero (the default)
	// means this router takes no links: a LinkHello is refused and
	// subscriptions are acknowledged at once. It defaults to
	// mesh.DefaultMaxLinks when Peers is set.
	MaxLinks int
	// Table is the mesh routing structure, "shallow", "poset" or "forest";
	// used only when MaxLinks > 0. Empty: shallow (poset.Shallow: inserts
	// stay cheap at 10^5-10^6 subscriptions), or poset when RTO or fixed
	// filters are on (Assist), which shallow does not take. See
	// docs/benchmarks.md, "The default routing table", for the
	// measurements behind the choice.
	Table string
	// Merge turns on perfect merging of the filters forwarded to each
	// neighbour (mesh.Config.Merge); off by default.
	Merge bool
	// Peers are the UDP addresses of neighbour routers this router dials
	// and keeps linked (redialling with backoff after a loss).
	Peers []string
	// Forward is how events cross links: "exact" (default: each router
	// matches events exactly) or "bloom" (the first router sends a
	// summary, inner routers forward on it; see bloom.go). Linked routers
	// must agree on it and on Bloom.
	Forward string
	// BloomIndex is the tree over the filters each link forwarded, in
	// Bloom mode: "sbstree" (default) or "bftree".
	BloomIndex string
	// Bloom are the Bloom parameters in Bloom mode (default bloom.Params{}:
	// m=1024, k=3, seed 0, qualified terms).
	Bloom bloom.Params
	// LinkVersion is the newest link protocol version this router
	// announces (0: wire.LinkVersion). wire.Version makes it link as
	// routers did before BloomPublish entries carried witnesses, so inner
	// routers walk their trees for every event; tests stand in for such
	// routers with it, and benchmarks measure what witnesses buy.
	LinkVersion uint64
	// ClientVersion is the newest client protocol version this router
	// accepts (0: wire.ClientVersion). An older one makes it answer
	// clients as a router of that version did (below
	// wire.VersionPublishDict: plain Publish frames only); tests stand in
	// for such routers with it, and benchmarks measure what the newer
	// version buys.
	ClientVersion uint64
	// PeerTLS is the client TLS configuration used to dial Peers, normally
	// certs.Loaded's ClientConfig with the node certificate; required
	// when Peers is set.
	PeerTLS *tls.Config
	// Advertise turns advertisements on (advert.go, mesh.Config.Advertise):
	// publishers advertise what they will publish, subscriptions go only
	// toward links that advertised overlapping content, and a client's
	// event matching none of its advertisements is refused. Every router
	// of a mesh must agree (the link hello carries the mode; a mismatch is
	// refused). A withdrawal takes no subscription back (it could overtake
	// events still in flight); durable subscriptions and publishes are not
	// restricted. Off by default; used only when MaxLinks > 0.
	Advertise bool
	// Assist configures client-assisted placement, RTO and FF
	// (rto_config.go); off by default.
	Assist AssistConfig
	// Durable, if set, turns on durable delivery (durable.go): pubends,
	// the intermediate broker and the SHB, stored under DataDir/durable.
	Durable *DurableConfig
	// Permissions, if set, restricts what each client (by its
	// certificate's name) may subscribe to and publish (permissions.go);
	// nil allows everything. Router.SetPermissions replaces it.
	Permissions *perm.Table
	// Logger receives structured logs; default slog.Default().
	Logger *slog.Logger
	// Metrics receives the router's metrics; default NewMetrics(nil).
	Metrics *Metrics
}

// withDefaults returns c with zero fields set to their defaults, or an
// error naming the first invalid field.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Name == "":
		return c, errors.New("router config: Name is required")
	case c.TLS == nil:
		return c, errors.New("router config: TLS is required")
	case c.DataDir == "":
		return c, errors.New("router config: DataDir is required")
	case c.MaxFrame > wire.HardMaxFrame:
		return c, fmt.Errorf("router config: MaxFrame %d exceeds %d", c.MaxFrame, wire.HardMaxFrame)
	case len(c.Peers) > 0 && c.PeerTLS == nil:
		return c, errors.New("router config: PeerTLS is required to dial Peers")
	case c.ClientVersion != 0 && (c.ClientVersion < wire.Version || c.ClientVersion > wire.ClientVersion):
		return c, fmt.Errorf("router config: ClientVersion %d outside %d-%d", c.ClientVersion, wire.Version, wire.ClientVersion)
	case c.MaxSubscriptionsPerConn < 0 || c.SendQueue < 0 || c.ControlQueue < 0 || c.MaxLinks < 0:
		return c, errors.New("router config: limits must not be negative")
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	if c.Index == "" {
		c.Index = DefaultIndex()
	}
	if _, err := match.NewIndex(c.Index); err != nil {
		return c, fmt.Errorf("router config: %w", err)
	}
	if len(c.Peers) > 0 {
		setDefault(&c.MaxLinks, mesh.DefaultMaxLinks)
	}
	if err := c.checkForward(); err != nil {
		return c, err
	}
	set, err := c.Assist.resolve()
	if err != nil {
		return c, err
	}
	if c.Table == "" {
		c.Table = defaultTable(set.On || len(set.Fixed) > 0)
	}
	if c.Table == "shallow" && (set.On || len(set.Fixed) > 0) {
		return c, errors.New("router config: the shallow table takes no RTO or fixed filters (use poset or forest)")
	}
	if c.ClientVersion == 0 {
		c.ClientVersion = wire.ClientVersion
	}
	setDefault(&c.MaxSubscriptionsPerConn, 100000)
	setDefault(&c.MaxFrame, wire.DefaultMaxFrame)
	setDefault(&c.SendQueue, 65536)
	setDefault(&c.ControlQueue, 4096)
	setDefault(&c.IdleTimeout, 30*time.Second)
	setDefault(&c.KeepAlive, 10*time.Second)
	setDefault(&c.Heartbeat, min(time.Second, c.KeepAlive))
	setDefault(&c.HandshakeTimeout, 10*time.Second)
	setDefault(&c.ShutdownGrace, 2*time.Second)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	return c, nil
}

func setDefault[T int | time.Duration](p *T, v T) {
	if *p == 0 {
		*p = v
	}
}
