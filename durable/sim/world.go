package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/memstore"
)

// world is one simulated run.
type world struct {
	cfg      Config
	topo     topology
	rng      *rand.Rand
	now      durable.Tick
	q        queue
	chaos    bool // faults are being injected
	nodes    map[string]*node
	groups   map[string]*group // replicated PHBs, by PHB name (replicas.go)
	order    []string          // node names, sorted
	pubs     []*publisher
	subs     []*subscriber
	subByID  map[string]*subscriber
	pubByID  map[string]*publisher
	cuts     map[string]durable.Tick
	fifoLast map[string]durable.Tick
	linkFree map[string]durable.Tick // per directed broker link, when it can transmit again
	oracle   *oracle
	stats    Stats
	res      *Result
	done     bool
}

func pubendName(i int) string { return fmt.Sprintf("p%d", i+1) }
func phbName(i int) string    { return fmt.Sprintf("phb%d", i+1) }
func shbName(i int) string    { return fmt.Sprintf("shb%d", i+1) }

func newWorld(cfg Config, res *Result) (*world, error) {
	topo, err := newTopology(cfg.Topology, cfg.Pubends, cfg.SHBs)
	if err != nil {
		return nil, err
	}
	w := &world{cfg: cfg, topo: topo, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), nodes: map[string]*node{}, groups: map[string]*group{},
		subByID: map[string]*subscriber{}, pubByID: map[string]*publisher{},
		cuts: map[string]durable.Tick{}, fifoLast: map[string]durable.Tick{}, linkFree: map[string]durable.Tick{}, res: res}
	w.oracle = newOracle(cfg.has(FaultRelease), cfg.LearnSHBs)
	for i := range cfg.Pubends {
		if cfg.Replicas > 1 {
			w.addGroup(i)
		} else {
			w.addNode(phbName(i), kindPHB)
		}
	}
	for _, r := range topo.routers {
		w.addNode(r, kindRouter)
	}
	for i := range cfg.SHBs {
		w.addNode(shbName(i), kindSHB)
	}
	for _, name := range w.order {
		if err := w.boot(w.nodes[name]); err != nil {
			return nil, err
		}
	}
	return w, nil
}

func (w *world) addNode(name string, kind nodeKind) {
	w.nodes[name] = &node{name: name, kind: kind, store: memstore.New()}
	w.order = append(w.order, name)
	slices.Sort(w.order)
}

func (w *world) shbNames() []string {
	var out []string
	for i := range w.cfg.SHBs {
		out = append(out, shbName(i))
	}
	return out
}

func (w *world) pubendNames() []string {
	var out []string
	for i := range w.cfg.Pubends {
		out = append(out, pubendName(i))
	}
	return out
}

func (w *world) phbConfig(name string) durable.PubendConfig {
	var i int
	fmt.Sscanf(name, "phb%d", &i)
	cfg := durable.PubendConfig{ID: pubendName(i - 1), Node: name,
		Downstream: []string{w.topo.phbRouter(name)}, SHBs: w.shbNames(), WipeGrace: w.cfg.WipeGrace}
	if w.cfg.LearnSHBs {
		cfg.SHBs, cfg.LearnSHBs = nil, true
	}
	if w.cfg.has(FaultRelease) {
		cfg.MaxRetain, cfg.DropAfter = w.cfg.MaxRetain, w.cfg.DropAfter
	}
	cfg.ProgressHold = w.progressHold()
	return cfg
}

// progressHold gives two thirds of the seeds a short ProgressHold (20 or
// 100 ms instead of the seconds of the defaults, which outlast a run), so
// that writes held back are also written alone within a run, and crashes
// fall both before and after.
func (w *world) progressHold() durable.Tick {
	return []durable.Tick{0, 20_000, 100_000}[w.cfg.Seed/9%3] // not the topology's Seed%9
}

// routerConfig configures a router (see topology.routerConfig).
func (w *world) routerConfig(name string) durable.RouterConfig {
	cfg := w.topo.routerConfig(name, w.cfg.Pubends)
	if w.cfg.has(FaultSlow) {
		cfg.CacheRuns = slowCacheRuns
	}
	return cfg
}

// shbConfig gives half of the seeds tiny subscriber queues (1 to 4
// unacknowledged events), so slow subscribers overflow to catch-up and
// catch-up streams pause on their acknowledgements.
func (w *world) shbConfig(name string) durable.SHBConfig {
	cfg := durable.SHBConfig{Node: name, Upstream: w.topo.parent[name], Pubends: w.pubendNames()}
	if w.cfg.Seed%2 == 1 {
		cfg.SubQueue = 1 + int(w.cfg.Seed/2%4)
	}
	// The default catch-up window (256) exceeds a run's events; a small one
	// on most seeds keeps the window's flow control exercised.
	if w.cfg.Seed%4 != 0 {
		cfg.CatchupWindow = 1 + int(w.cfg.Seed/4%8)
	}
	cfg.ProgressHold = w.progressHold()
	return cfg
}

func (w *world) isSubscriber(name string) bool { _, ok := w.subByID[name]; return ok }

// violate records a protocol violation.
func (w *world) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	w.trace("VIOLATION %s", msg)
	if len(w.res.Violations) < 20 {
		w.res.Violations = append(w.res.Violations, Violation{Seed: w.cfg.Seed, Time: w.now, What: msg})
	}
}

func (w *world) trace(format string, args ...any) {
	if w.cfg.Trace != nil {
		w.cfg.Trace(fmt.Sprintf("%10d ", w.now) + fmt.Sprintf(format, args...))
	}
}

// at schedules fn at time t.
func (w *world) at(t durable.Tick, fn func()) { w.q.add(&item{at: t, fn: fn}) }

// dispatch delivers a message to its receiver.
func (w *world) dispatch(env durable.Envelope) {
	w.trace("%v", env)
	if n, ok := w.nodes[env.To]; ok {
		w.deliverToNode(n, env)
		return
	}
	if g, ok := w.groups[env.To]; ok {
		w.deliverToGroup(g, env)
		return
	}
	if s, ok := w.subByID[env.To]; ok {
		s.receive(w, env.Msg)
		return
	}
	if p, ok := w.pubByID[env.To]; ok {
		p.receive(w, env.Msg)
		return
	}
	w.violate("message to unknown node: %v", env)
}
