package durable

import (
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// RouterConfig configures an intermediate broker. Zero tunables take the
// defaults given on each field.
type RouterConfig struct {
	// Node is this router's node id.
	Node string
	// Upstream maps each pubend to the neighbour its knowledge comes from.
	Upstream map[string]string
	// Downstream lists the neighbours (SHBs) knowledge is forwarded to.
	Downstream []string
	// CacheRuns bounds the knowledge kept per pubend to answer nacks, in
	// stream runs (default 4096).
	CacheRuns int
	// NackTimeout is how long a nack forwarded upstream holds back the same
	// request from below (default 20 ms).
	NackTimeout Tick
	// WaitTimeout is how long a link that nacked waits for the answer:
	// knowledge this router has no longer cached (below its cache's base)
	// goes only to links that wait for it (default 40 NackTimeouts). It
	// must outlast the longest time between an SHB's repeated nacks (its
	// NackRetryMax) plus a round trip: each repeat renews the wait at every
	// hop, so a link whose SHB still wants ticks always has a live wait for
	// them, however long upstream takes to answer. A wait as short as a
	// round trip drops every answer once a loaded path takes longer than
	// that (syncs held behind a busy disk), and the SHB asks again for
	// ever.
	WaitTimeout Tick
	// Incarnation distinguishes this start of the router from earlier ones;
	// it must grow with every restart (a boot counter or boot time). A filter
	// set sent in answer to an earlier incarnation's resync is ignored, and
	// SHBs compare the stamps of filtered silences by it.
	Incarnation uint64
	// ResyncInterval is how often a link with an incomplete filter set is
	// asked for it again (default 20 ms).
	ResyncInterval Tick
}

func (c *RouterConfig) populate() error {
	if c.Node == "" {
		return fmt.Errorf("router config: Node is required")
	}
	if c.CacheRuns <= 0 {
		c.CacheRuns = 4096
	}
	if c.NackTimeout <= 0 {
		c.NackTimeout = 20_000
	}
	if c.WaitTimeout <= 0 {
		c.WaitTimeout = 40 * c.NackTimeout
	}
	if c.ResyncInterval <= 0 {
		c.ResyncInterval = 20_000
	}
	return nil
}

// link is a downstream neighbour: its durable filters and how far
// knowledge has gone down it.
type link struct {
	filters map[string]linkFilter
	// index holds the filters (ids: each subscription's id in it), so a
	// D tick costs one index match, not one per filter of the link.
	// Every change to filters goes through setFilter, dropFilter or
	// replaceFilters, which keep it.
	index      *match.Fast
	ids        map[string]match.ID
	nextID     match.ID
	matchBuf   []match.ID
	complete   bool            // the filter set is known; until then D goes unfiltered
	epoch, ver uint64          // of the last full set applied
	lastFwd    map[string]Tick // per pubend, the highest tick forwarded
	lastResync Tick
	gen        uint64 // grows with every change of filters
	// lastOut marks the last message queued to the link since the last
	// Ready, and filtered whether forward made it a filtered silence
	// (router_forward.go: the next one may extend it).
	lastOut  sendMark
	filtered bool
}

// outstanding is a nack sent upstream.
type outstanding struct {
	r       Range
	expires Tick
}

// upInstall is an install from a link waiting for the acknowledgements of
// every upstream neighbour before it is acknowledged down the link.
type upInstall struct {
	link, sub string
	ups       []string       // the upstream neighbours it was sent to
	acks      map[string]Msg // per upstream neighbour, its acknowledgement
	// first is the version of this router's first install upstream for
	// the key: only acknowledgements of this incarnation's installs from
	// it on answer this one (resends from below keep it, so an answer to
	// an earlier send still counts when resends come faster than a round
	// trip).
	first uint64
	// epoch and ver are the stamp of the newest install from below, which
	// the acknowledgement down the link echoes.
	epoch, ver uint64
}

// routerPubend is a router's soft state for one pubend.
type routerPubend struct {
	stream     *Stream
	lostFrom   Tick                // MsgLost.From of the stream's L prefix
	waiters    map[string][]waiter // per link (see router_waiters.go)
	nextExpiry Tick                // no waiter expires before
	asked      []outstanding
}

// RouterStats counts nack ranges, to measure consolidation.
type RouterStats struct {
	NacksFromBelow int // nack ranges received from downstream
	NacksUpstream  int // nack ranges sent upstream
	NacksAnswered  int // nack ranges answered from the cache
	SilencesMerged int // filtered silences that widened the previous one to their link (router_forward.go)
}

// Router is an intermediate broker: it forwards knowledge downstream,
// turning D into S on links where no durable subscription matches, caches
// recent knowledge to answer nacks, and consolidates nacks for the same
// ticks into one upstream nack. It keeps only soft state: after a restart
// it forwards unfiltered until each link has sent its filter set again.
//
// Routers stack: the filters of every link are installed at each upstream
// neighbour as this router's own filters, and an install is acknowledged
// down only once every upstream neighbour has acknowledged it, with the
// highest tick any hop had forwarded and every hop's stamp (multi-hop
// install acknowledgements).
type Router struct {
	cfg     RouterConfig
	links   map[string]*link
	pubends map[string]*routerPubend
	ups     []string              // the distinct upstream neighbours, sorted
	pending map[string]*upInstall // by upstream key (see upKey)
	ver     uint64                // version of this router's own filter messages upstream
	out     sendBuf
	now     Tick
	Stats   RouterStats
	// noMerge turns extendFiltered off: the tests' reference, one
	// filtered silence per D tick.
	noMerge bool
}

// NewRouter returns a router with empty soft state (a fresh start or a
// restart).
func NewRouter(cfg RouterConfig) (*Router, error) {
	if err := cfg.populate(); err != nil {
		return nil, err
	}
	r := &Router{cfg: cfg, links: map[string]*link{}, pubends: map[string]*routerPubend{},
		pending: map[string]*upInstall{}}
	for _, d := range cfg.Downstream {
		r.links[d] = newLink()
	}
	for p, up := range cfg.Upstream {
		r.pubends[p] = &routerPubend{stream: NewStream(0), waiters: map[string][]waiter{}, nextExpiry: MaxTick}
		if !contains(r.ups, up) {
			r.ups = append(r.ups, up)
		}
	}
	slices.Sort(r.ups)
	return r, nil
}

// Step handles one message at time now.
func (r *Router) Step(now Tick, env Envelope) error {
	r.now = now
	m := env.Msg
	switch m.Kind {
	case MsgData, MsgSilence, MsgLost:
		return r.knowledge(env)
	case MsgNack:
		return r.nackFromBelow(env)
	case MsgRelease:
		up, ok := r.cfg.Upstream[m.Pubend]
		if !ok {
			return fmt.Errorf("router %s: release for unknown pubend %q", r.cfg.Node, m.Pubend)
		}
		r.send(up, m) // passed up per SHB, not merged (rule Intermediate 4)
	case MsgInstall, MsgUninstall, MsgFilters:
		return r.filters(env)
	case MsgInstallAck:
		r.upstreamAck(env)
	case MsgResync:
		r.answerResync(env)
	case MsgClaim:
		r.flood(env)
	default:
		return fmt.Errorf("router %s: unexpected %v from %s", r.cfg.Node, m.Kind, env.From)
	}
	return nil
}

// Tick handles a timer firing: expire nack state, ask for filter sets.
func (r *Router) Tick(now Tick) error {
	r.now = now
	for _, p := range r.pubends {
		p.expireWaiters(now)
		p.asked = slices.DeleteFunc(p.asked, func(o outstanding) bool { return o.expires <= now })
	}
	for _, name := range r.cfg.Downstream {
		l := r.links[name]
		if !l.complete && now-l.lastResync >= r.cfg.ResyncInterval {
			l.lastResync = now
			r.send(name, Msg{Kind: MsgResync, Nonce: r.cfg.Incarnation})
		}
	}
	return nil
}

// Ready returns the messages to send (a router persists nothing).
func (r *Router) Ready() Ready {
	rd := Ready{Msgs: r.out.take()}
	return rd
}

func (r *Router) send(to string, m Msg) {
	r.out.add(Envelope{From: r.cfg.Node, To: to, Msg: m})
	if l := r.links[to]; l != nil {
		l.lastOut, l.filtered = r.out.mark(), false
	}
}

func (r *Router) pubend(id string) (*routerPubend, error) {
	p, ok := r.pubends[id]
	if !ok {
		return nil, fmt.Errorf("router %s: unknown pubend %q", r.cfg.Node, id)
	}
	return p, nil
}
