package router

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/pebblestore"
	"github.com/sift-pubsub/sift/internal/wire"
)

// DurableConfig turns on durable delivery (package durable) in a router:
// it hosts pubends (the PHB role), forwards knowledge between its links
// (the intermediate role) and serves durable subscribers (the SHB role).
// All of it is stored in Pebble under Config.DataDir/durable.
//
// Every router of a durable mesh should be given the same Pubends and
// Members, so that each knows where every pubend lives and which SHBs a
// pubend waits for before it releases anything.
type DurableConfig struct {
	// Pubends maps every pubend of the mesh to the router that hosts it.
	// The entries naming this router are hosted here.
	Pubends map[string]string
	// Members lists every router of the durable mesh (each runs an SHB).
	// A pubend releases a tick once every member's SHB has released it;
	// with no members, nothing is ever released (the log only grows).
	Members []string
	// MaxRetain turns on early release: ticks older than this, delivered
	// to every up-to-date subscriber, are released even if a disconnected
	// subscriber has not acknowledged them (it gets a gap). Zero: off.
	MaxRetain time.Duration
	// DropAfter drops an SHB from which no release report came for this
	// long (durable rule PHB 6): release stops waiting for it, so its
	// subscribers get gaps for what is released meanwhile; it is taken back
	// when it reports again. Zero (the default) never drops one.
	DropAfter time.Duration
	// SubQueue bounds each subscriber session's unacknowledged events per
	// pubend (durable.SHBConfig.SubQueue; default 1024).
	SubQueue int
	// NackRetry is how long an SHB waits before it asks again for ticks
	// it nacked, and how long an intermediate broker holds back repeats
	// of a nack it forwarded (default 200ms). Router links are reliable
	// streams, so repeats matter only after a link or a router went down;
	// short intervals make a recovering router's neighbours answer the
	// same range many times over.
	NackRetry time.Duration
	// ReportInterval is the period of the SHB's release reports and of its
	// silences to idle subscribers (default 100ms). Every idle subscriber
	// gets a silence per period, so with many subscribers a short period
	// costs a message per subscriber and period.
	ReportInterval time.Duration
}

// validate checks the configuration of router name.
func (c *DurableConfig) validate(name string) error {
	for p, host := range c.Pubends {
		if p == "" || host == "" || len(p) > wire.MaxNameLen {
			return fmt.Errorf("durable: pubend %q at %q: names must be 1-%d bytes", p, host, wire.MaxNameLen)
		}
		if strings.Contains(host, "/") || strings.Contains(name, "/") {
			return fmt.Errorf("durable: router names must not contain '/' (%q, %q)", host, name)
		}
	}
	if c.MaxRetain < 0 || c.DropAfter < 0 || c.SubQueue < 0 || c.NackRetry < 0 || c.ReportInterval < 0 {
		return errors.New("durable: MaxRetain, DropAfter, SubQueue, NackRetry and ReportInterval must not be negative")
	}
	if c.ReportInterval == 0 {
		c.ReportInterval = 100 * time.Millisecond
	}
	if c.NackRetry == 0 {
		c.NackRetry = 200 * time.Millisecond
	}
	return nil
}

// local returns the pubends hosted by router name, sorted.
func (c *DurableConfig) local(name string) []string {
	var ps []string
	for p, host := range c.Pubends {
		if host == name {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

// Durable node ids. A router's durable machines are addressed as: its
// intermediate broker by the router name N, its SHB as N/shb, the PHB of
// its pubend P as N/pubend/P, and a client connection as client/ID. Only
// the intermediate brokers of neighbour routers talk over links, so a
// message for another router always lands on that router's intermediate
// broker.
func shbID(router string) string            { return router + "/shb" }
func pubendNode(router, p string) string    { return router + "/pubend/" + p }
func clientNode(id ifaceID) string          { return fmt.Sprintf("client/%d", uint64(id)) }
func isClientNode(node string) bool         { return strings.HasPrefix(node, "client/") }
func microsOf(d time.Duration) durable.Tick { return durable.Tick(d / time.Microsecond) }

// durableNode is a router's durable side: the state machines, their
// Pebble store, and the driver goroutine that steps them (see
// durable_loop.go). Connection goroutines hand it input through in; it
// sends on connections' control lanes without ever blocking.
type durableNode struct {
	name    string
	cfg     DurableConfig
	log     *slog.Logger
	store   *pebblestore.Store
	pubends map[string]*durable.Pubend // by pubend id
	// pubendIDs are the keys of pubends, sorted, and byNode the pubends by
	// node id: both fixed at boot, read per flush, tick and message.
	pubendIDs []string
	byNode    map[string]*durable.Pubend
	router    *durable.Router
	up        map[string]string // the router's upstreams, by pubend
	topo      chan struct{}     // a token when links changed
	shb       *durable.SHB
	in        chan durableInput
	met       *durableMetrics

	mu      sync.Mutex // guards links and clients
	links   map[string]*durableLink
	clients map[ifaceID]*durableClient

	view   durableView // positions for /debug/durable, owned by the driver
	viewMu sync.Mutex  // guards snapshot
	snap   DurableStatus
}

// durableLink is a router link as the durable side sees it: the
// neighbour's name and connection, and the routers reachable through it.
type durableLink struct {
	peer  string
	c     *conn
	reach []string
}

// durableClient is a client connection that spoke durable: its sessions
// (subscription id to session number) to close when it goes away.
type durableClient struct {
	c        *conn
	sessions map[string]uint64
}

// newDurableNode opens the store and recovers the state machines.
func newDurableNode(cfg Config, met *Metrics) (*durableNode, error) {
	dc := *cfg.Durable
	if err := dc.validate(cfg.Name); err != nil {
		return nil, err
	}
	st, err := pebblestore.Open(filepath.Join(cfg.DataDir, "durable"), nil)
	if err != nil {
		return nil, fmt.Errorf("durable: %w", err)
	}
	d := &durableNode{name: cfg.Name, cfg: dc, log: cfg.Logger.With("router", cfg.Name, "part", "durable"),
		store: st, pubends: map[string]*durable.Pubend{}, byNode: map[string]*durable.Pubend{}, in: make(chan durableInput, 4096), topo: make(chan struct{}, 1),
		links: map[string]*durableLink{}, clients: map[ifaceID]*durableClient{}}
	if err := d.boot(); err != nil {
		st.Close()
		return nil, err
	}
	d.met = newDurableMetrics(met.Registry)
	d.view.init()
	return d, nil
}

// boot creates the state machines from the store.
func (d *durableNode) boot() error {
	var shbs []string
	for _, m := range d.cfg.Members {
		shbs = append(shbs, shbID(m))
	}
	for _, p := range d.cfg.local(d.name) {
		pe, err := durable.NewPubend(durable.PubendConfig{ID: p, Node: pubendNode(d.name, p),
			Downstream: []string{d.name}, SHBs: shbs, MaxRetain: microsOf(d.cfg.MaxRetain),
			DropAfter: microsOf(d.cfg.DropAfter)}, d.store)
		if err != nil {
			return fmt.Errorf("durable: %w", err)
		}
		d.pubends[p] = pe
		d.byNode[pubendNode(d.name, p)] = pe
	}
	d.pubendIDs = sortedNames(d.pubends)
	if err := d.newRouter(d.upstreams()); err != nil {
		return err
	}
	var err error
	d.shb, err = durable.NewSHB(durable.SHBConfig{Node: shbID(d.name), Upstream: d.name,
		Pubends: sortedNames(d.cfg.Pubends), SubQueue: d.cfg.SubQueue, NackRetry: microsOf(d.cfg.NackRetry),
		ReportInterval: microsOf(d.cfg.ReportInterval)}, d.store)
	if err != nil {
		return fmt.Errorf("durable: %w", err)
	}
	return nil
}

// upstreams maps every pubend to the node its knowledge comes from: the
// local PHB, or the neighbour on the way to its router (the router's own
// name while no link leads there).
func (d *durableNode) upstreams() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	up := make(map[string]string, len(d.cfg.Pubends))
	for p, host := range d.cfg.Pubends {
		switch l := d.linkToward(host); {
		case host == d.name:
			up[p] = pubendNode(d.name, p)
		case l != nil:
			up[p] = l.peer
		default:
			up[p] = host
		}
	}
	return up
}

// newRouter (re)creates the intermediate broker for the given upstreams,
// as a new incarnation: a router keeps only soft state, and a new
// incarnation makes its neighbours resend what it needs. Its downstream
// links are the local SHB and every other router of the mesh (messages
// only reach the neighbours).
func (d *durableNode) newRouter(up map[string]string) error {
	down := []string{shbID(d.name)}
	for _, host := range d.cfg.Pubends {
		down = append(down, host)
	}
	down = append(down, d.cfg.Members...)
	down = slices.DeleteFunc(down, func(s string) bool { return s == d.name })
	down = slices.Compact(slices.Sorted(slices.Values(down)))
	r, err := durable.NewRouter(durable.RouterConfig{Node: d.name, Upstream: up, Downstream: down,
		Incarnation: uint64(time.Now().UnixMicro()), NackTimeout: microsOf(d.cfg.NackRetry) / 2})
	if err != nil {
		return fmt.Errorf("durable: %w", err)
	}
	d.router, d.up = r, up
	return nil
}

// retopologize recreates the intermediate broker when a link change moved
// the way to some pubend (driver goroutine); the old broker's last
// messages are sent first.
func (d *durableNode) retopologize(local []durable.Envelope) []durable.Envelope {
	up := d.upstreams()
	if maps.Equal(up, d.up) {
		return local
	}
	local = d.send(d.router.Ready().Msgs, local)
	if err := d.newRouter(up); err != nil {
		d.log.Error("durable: new intermediate broker", "err", err)
		return local
	}
	d.met.routerRestarts.Inc()
	d.log.Info("durable routes changed", "upstreams", fmt.Sprint(up))
	return local
}

// durableInput is one input to the driver: a message for a local
// machine, or a client connection that went away.
type durableInput struct {
	env    durable.Envelope
	detach ifaceID // non-zero: the client connection closed
}
