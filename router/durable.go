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
	"sync/atomic"
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
// Nothing needs to be configured for a mesh: routers learn every pubend
// and its host, and every router with durable delivery on, through their
// links (durable.Directory), and each pubend waits for the SHB of every
// router it learned of before it releases a tick (see durable_mesh.go).
// Pubends and Members are static overrides and additions.
type DurableConfig struct {
	// Pubends maps pubends to the routers that host them; the entries
	// naming this router are hosted here. Entries for other routers
	// override what the directory learns.
	Pubends map[string]string
	// Members lists routers whose SHBs the pubends hosted here wait for
	// from the start, in addition to every router learned through the
	// links (and every SHB that installs a subscription or reports).
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
	// WipeGrace is how long the pubends hosted here keep holding release
	// at what a router's SHB last reported after that router came back
	// with an empty disk (durable.PubendConfig.WipeGrace; default 10
	// minutes): its durable subscribers that reconnect within it, with
	// their CTs, miss nothing; later ones get a gap.
	WipeGrace time.Duration
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
	// MinFree is the free space the durable store's file system must keep
	// (default 64 MiB): below it, durable publishes are refused (the
	// publisher retries), so the store never runs out of space mid-write.
	// Plain routing is unaffected.
	MinFree uint64
	// OpenStore opens the durable store in dir; nil opens Pebble there. A
	// test injects a failing store with it.
	OpenStore func(dir string) (DurableStore, error)
	// Replicas maps replicated pubends to the routers holding their
	// replicas (docs/replication.md); this router runs a replica of each
	// pubend whose list names it, and hosts it while that replica leads.
	// A replicated pubend must not be in Pubends.
	Replicas map[string][]string
	// ReplicaJoin says this router's store was lost (wiped, or a new
	// machine): its replicas join under fresh raft ids instead of
	// starting a new pubend. It matters only with an empty store.
	ReplicaJoin bool
	// IdleSilence is how long the SHB waits, for an up-to-date durable
	// subscriber it sent nothing, before it sends it a silence (its CT
	// moves to the SHB's latest tick), and the period of those silences
	// (default 10 ReportIntervals: 1 s). Each is a message on the
	// subscriber's connection, so with many idle subscribers a short
	// period costs a message (and a packet) per subscriber and period;
	// subscribers receiving events need none. Subscribers acknowledge
	// silences about once a second, so shorter periods do not release
	// ticks much sooner.
	IdleSilence time.Duration
	// ReportInterval is the period of the SHB's release reports (default
	// 100ms).
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
	for p, rs := range c.Replicas {
		if _, ok := c.Pubends[p]; ok {
			return fmt.Errorf("durable: pubend %q is both replicated and hosted by %s", p, c.Pubends[p])
		}
		if p == "" || len(p) > wire.MaxNameLen || len(rs) == 0 {
			return fmt.Errorf("durable: replicated pubend %q: a name of 1-%d bytes and replicas are required", p, wire.MaxNameLen)
		}
	}
	if c.MaxRetain < 0 || c.DropAfter < 0 || c.WipeGrace < 0 || c.SubQueue < 0 || c.NackRetry < 0 || c.ReportInterval < 0 || c.IdleSilence < 0 {
		return errors.New("durable: MaxRetain, DropAfter, WipeGrace, SubQueue, NackRetry, ReportInterval and IdleSilence must not be negative")
	}
	if c.WipeGrace == 0 {
		c.WipeGrace = 10 * time.Minute
	}
	if c.ReportInterval == 0 {
		c.ReportInterval = 100 * time.Millisecond
	}
	if c.IdleSilence == 0 {
		c.IdleSilence = 10 * c.ReportInterval
	}
	if c.NackRetry == 0 {
		c.NackRetry = 200 * time.Millisecond
	}
	return nil
}

// DurableStore is the store of a router's durable side
// (durable/pebblestore's Store).
type DurableStore interface {
	durable.Store
	// Apply writes a batch (synced if sync is set).
	Apply(b *durable.Batch, sync bool) error
	// Flush makes every applied batch durable.
	Flush() error
	// DiskUsage estimates the bytes on disk of the keys in [lo, hi).
	DiskUsage(lo, hi []byte) (uint64, error)
	// Size returns the bytes the store uses on disk.
	Size() uint64
	Close() error
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
	store   DurableStore
	pubends map[string]*durable.Pubend // by pubend id
	// pubendIDs are the keys of pubends, sorted, and byNode the pubends by
	// node id: both fixed at boot, read per flush, tick and message.
	pubendIDs []string
	byNode    map[string]*durable.Pubend
	// replicas are the replicated pubends with a replica here, by pubend
	// and by the pubend's node id here (durable_replica.go).
	replicas      map[string]*replicaHost
	replicaByNode map[string]*replicaHost
	replicaIn     chan durableInput // replica frames, served before other input
	replicaTicked time.Time         // when the replicas last ticked
	router        *durable.Router
	up            map[string]string // the router's upstreams, by pubend
	down          []string          // the router's downstream links
	// neighbours are the neighbours with durable delivery ever linked
	// (persisted, see neighbourKey), driver goroutine only.
	neighbours map[string]bool
	outboxes   map[string]*outbox // durable frames waiting for a link lane, by peer (driver goroutine)
	// clientOut and clientOrder gather a send's frames per client
	// (durable_route.go), driver goroutine only.
	clientOut   map[ifaceID]*clientBatch
	clientOrder []ifaceID
	clientEnc   wire.Durable // the message queueClient encodes (not one allocated per message)
	// heldSilences are the silences waiting for a backed-up client lane
	// (durable_silence.go), driver goroutine only.
	heldSilences map[silenceKey]durable.Envelope
	// The store's health (durable_full.go), driver goroutine only: a
	// batch that failed to be written, why free space is short ("" if it
	// is not), the store's folder, the free space to keep and how it is
	// read.
	lowSpace  string
	storeDir  string
	minFree   uint64
	freeSpace func(dir string) (uint64, error)
	dir       *durable.Directory
	host      *durable.Host     // the group commit of every machine above
	hosts     map[string]string // every pubend known, by host (driver goroutine)
	topo      chan struct{}     // a token when links or the directory changed
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
// (subscription id to session number) to close when it goes away, and
// whether the driver sent it something since the last heartbeat round
// (beatClients).
type durableClient struct {
	c        *conn
	sessions map[string]uint64
	sent     atomic.Bool
	bufHint  int // the size of the last batch pushed to it (driver goroutine)
}

// newDurableNode opens the store and recovers the state machines.
func newDurableNode(cfg Config, met *Metrics) (*durableNode, error) {
	dc := *cfg.Durable
	if err := dc.validate(cfg.Name); err != nil {
		return nil, err
	}
	open := dc.OpenStore
	if open == nil {
		open = func(dir string) (DurableStore, error) { return pebblestore.Open(dir, nil) }
	}
	dir := filepath.Join(cfg.DataDir, "durable")
	st, err := open(dir)
	if err != nil {
		return nil, fmt.Errorf("durable: %w", err)
	}
	d := &durableNode{name: cfg.Name, cfg: dc, log: cfg.Logger.With("router", cfg.Name, "part", "durable"),
		store: st, pubends: map[string]*durable.Pubend{}, byNode: map[string]*durable.Pubend{}, in: make(chan durableInput, 4096), topo: make(chan struct{}, 1),
		links: map[string]*durableLink{}, clients: map[ifaceID]*durableClient{}, outboxes: map[string]*outbox{}, clientOut: map[ifaceID]*clientBatch{},
		storeDir: dir, minFree: dc.MinFree, freeSpace: statfsFree}
	if d.minFree == 0 {
		d.minFree = defaultMinFree
	}
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
	shbs := []string{shbID(d.name)}
	for _, m := range d.cfg.Members {
		shbs = append(shbs, shbID(m))
	}
	local := d.cfg.local(d.name)
	if d.host == nil {
		d.host = durable.NewHost() // its brokers: setHost
	}
	var err error
	d.dir, err = durable.NewDirectory(durable.DirectoryConfig{Node: d.name, Local: local,
		Version: uint64(time.Now().UnixMicro())})
	if err != nil {
		return fmt.Errorf("durable: %w", err)
	}
	d.hosts = d.knownHosts()
	for _, p := range local {
		pe, err := durable.NewPubend(durable.PubendConfig{ID: p, Node: pubendNode(d.name, p),
			Downstream: []string{d.name}, SHBs: shbs, LearnSHBs: true, MaxRetain: microsOf(d.cfg.MaxRetain),
			DropAfter: microsOf(d.cfg.DropAfter), WipeGrace: microsOf(d.cfg.WipeGrace)}, d.host.Store(d.store))
		if err != nil {
			return fmt.Errorf("durable: %w", err)
		}
		d.pubends[p] = pe
		d.byNode[pubendNode(d.name, p)] = pe
	}
	d.pubendIDs = sortedNames(d.pubends)
	if err := d.bootReplicas(shbs); err != nil {
		return err
	}
	d.shb, err = durable.NewSHB(durable.SHBConfig{Node: shbID(d.name), Upstream: d.name,
		Pubends: sortedNames(d.hosts), SubQueue: d.cfg.SubQueue, NackRetry: microsOf(d.cfg.NackRetry),
		ReportInterval: microsOf(d.cfg.ReportInterval), IdleSilence: microsOf(d.cfg.IdleSilence)}, d.host.Store(d.store))
	if err != nil {
		return fmt.Errorf("durable: %w", err)
	}
	if err := d.loadNeighbours(); err != nil {
		return fmt.Errorf("durable: %w", err)
	}
	up, down := d.routes()
	return d.newRouter(up, down)
}

// setHost makes the group commit take the Readies of the current
// machines with a store: the local pubends in order, the replicas and the
// SHB. The intermediate broker and the directory keep no durable state,
// so their messages never wait for a sync (sendStoreless), as they do not
// in the simulator, where every router is a node of its own.
func (d *durableNode) setHost() {
	var bs []durable.Broker
	for _, p := range d.pubendIDs {
		bs = append(bs, d.pubends[p])
	}
	bs = append(bs, d.replicaBrokers()...)
	bs = append(bs, d.shb)
	if d.host == nil {
		d.host = durable.NewHost(bs...)
		return
	}
	d.host.SetBrokers(bs...)
}

// knownHosts merges the directory's pubends with the static ones (which
// win).
func (d *durableNode) knownHosts() map[string]string {
	hosts := d.dir.Pubends()
	maps.Copy(hosts, d.cfg.Pubends)
	return hosts
}

// routes returns the intermediate broker's upstreams and downstream
// links. A pubend's upstream is the local PHB, or the neighbour on the
// way to its router (the router's own name while no link leads there);
// pubends the SHB knows whose host is not known yet have none. The
// downstream links are the local SHB and every neighbour known to run
// durable delivery that was ever linked (see neighbourKey).
func (d *durableNode) routes() (map[string]string, []string) {
	d.mu.Lock()
	up := make(map[string]string, len(d.hosts))
	for p, host := range d.hosts {
		switch l := d.linkToward(host); {
		case host == d.name:
			up[p] = pubendNode(d.name, p)
		case l != nil:
			up[p] = l.peer
		default:
			up[p] = host
		}
	}
	peers := sortedNames(d.links)
	d.mu.Unlock()
	known := d.dir.Routers()
	for _, peer := range peers {
		if !d.neighbours[peer] && (slices.Contains(known, peer) || slices.Contains(d.cfg.Members, peer) ||
			slices.Contains(slices.Collect(maps.Values(d.cfg.Pubends)), peer)) {
			d.addNeighbour(peer)
		}
	}
	down := append([]string{shbID(d.name)}, sortedNames(d.neighbours)...)
	slices.Sort(down)
	return up, down
}

// neighbourKey is the store key recording that peer was once a linked
// neighbour with durable delivery on. Such a neighbour stays a downstream
// link of the intermediate broker for good, also while it is down and
// across restarts: a link the broker holds no complete filter set for
// keeps it from answering an upstream resync, so an upstream never
// filters with a set that lacks the filters of a neighbour that is away
// (its subscribers' filters still hold; it would accept the silences
// filtered without them when it comes back). The key is the driver's
// own, outside the machines' key space (durable/keys.go).
func neighbourKey(peer string) []byte { return append([]byte("Dn"), peer...) }

// loadNeighbours reads the neighbours recorded by addNeighbour.
func (d *durableNode) loadNeighbours() error {
	d.neighbours = map[string]bool{}
	pre := neighbourKey("")
	return d.store.Scan(pre, prefixEnd(pre), func(k, _ []byte) bool {
		d.neighbours[string(k[len(pre):])] = true
		return true
	})
}

// addNeighbour records peer as a neighbour, synced before it is used.
func (d *durableNode) addNeighbour(peer string) {
	var b durable.Batch
	b.Set(neighbourKey(peer), nil)
	if err := d.store.Apply(&b, true); err != nil {
		d.log.Error("durable: record a neighbour", "peer", peer, "err", err)
		return
	}
	d.neighbours[peer] = true
}

// newRouter (re)creates the intermediate broker for the given upstreams
// and downstream links, as a new incarnation: a router keeps only soft
// state, and a new incarnation makes its neighbours resend what it needs.
func (d *durableNode) newRouter(up map[string]string, down []string) error {
	r, err := durable.NewRouter(durable.RouterConfig{Node: d.name, Upstream: up, Downstream: down,
		Incarnation: uint64(time.Now().UnixMicro()), NackTimeout: microsOf(d.cfg.NackRetry) / 2})
	if err != nil {
		return fmt.Errorf("durable: %w", err)
	}
	d.router, d.up, d.down = r, up, down
	d.setHost()
	return nil
}

// retopologize follows a change of the links or of the directory
// (driver goroutine): it tells the directory the links, makes the SHB and
// the local pubends know what the directory learned, and recreates the
// intermediate broker when the way to some pubend or the set of
// downstream links moved; the old broker's last messages are sent first.
func (d *durableNode) retopologize(local []durable.Envelope) []durable.Envelope {
	d.mu.Lock()
	peers := sortedNames(d.links)
	d.mu.Unlock()
	d.dir.SetLinks(peers)
	d.learn()
	up, down := d.routes()
	if maps.Equal(up, d.up) && slices.Equal(down, d.down) {
		return local
	}
	local = d.send(d.router.Ready().Msgs, local)
	if err := d.newRouter(up, down); err != nil {
		d.log.Error("durable: new intermediate broker", "err", err)
		return local
	}
	d.met.routerRestarts.Inc()
	d.log.Info("durable routes changed", "upstreams", fmt.Sprint(up), "downstream", fmt.Sprint(down))
	return local
}

// learn makes the SHB receive every pubend known and the local pubends
// wait for the SHB of every router known.
func (d *durableNode) learn() {
	d.hosts = d.knownHosts()
	for _, p := range sortedNames(d.hosts) {
		if !slices.Contains(d.shb.Pubends(), p) {
			if err := d.shb.AddPubend(p); err != nil {
				d.log.Error("durable: add pubend", "pubend", p, "err", err)
				continue
			}
			d.log.Info("durable pubend learned", "pubend", p, "host", d.hosts[p])
		}
	}
	for _, r := range d.dir.Routers() {
		for _, p := range d.pubendIDs {
			if d.pubends[p].AddSHB(shbID(r)) {
				d.log.Info("durable member learned", "pubend", p, "shb", shbID(r))
			}
		}
	}
	d.learnReplicas()
}

// durableInput is one input to the driver: a message for a local
// machine, or a client connection that went away.
type durableInput struct {
	env     durable.Envelope
	detach  ifaceID       // non-zero: the client connection closed
	replica *wire.Replica // non-nil: a replica frame from the link to env.From (durable_replica.go)
	admin   *adminReq     // non-nil: a membership change (durable_admin.go)
}
