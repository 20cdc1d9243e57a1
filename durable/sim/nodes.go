package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/memstore"
	"github.com/sift-pubsub/sift/durable/replica"
)

type nodeKind uint8

const (
	kindPHB nodeKind = iota
	kindRouter
	kindSHB
	kindReplica // one replica of a replicated PHB (replicas.go)
)

// node is one simulated broker: its machine, its store and whether it is
// up. incarnation grows at each restart; timers of earlier incarnations
// stop.
type node struct {
	name        string
	kind        nodeKind
	m           durable.Broker
	host        *durable.Host // the group commit of m (nodes_sync.go)
	store       *memstore.Store
	up          bool
	incarnation uint64
	pubend      *durable.Pubend
	router      *durable.Router
	shb         *durable.SHB
	skew        durable.Tick       // the node's clock minus simulated time (PHBs, clock fault)
	inbox       []durable.Envelope // messages waiting to be stepped (Config.StepCost)
	draining    bool               // a drain of the inbox is scheduled
	busyUntil   durable.Tick       // the broker steps its next message then
	group       *group             // a replica's group
	replica     *replica.Replica   // a replica's machine
	wiped       bool               // a replica's store was wiped: it joins anew
	retired     bool               // a replica taken out of its group (FaultMembers)
	fullUntil   durable.Tick       // its disk refuses writes until then (FaultFull)
}

// timerPeriod is how often every broker's Tick fires.
const timerPeriod = 5_000

// boot (re)creates the node's machine from its store and starts its timer.
func (w *world) boot(n *node) error {
	n.incarnation++
	n.host = durable.NewHost() // its broker: below
	st := n.host.Store(n.store)
	var err error
	switch n.kind {
	case kindPHB:
		cfg := w.phbConfig(n.name)
		n.pubend, err = durable.NewPubend(cfg, st)
		n.m = n.pubend
	case kindRouter:
		cfg := w.routerConfig(n.name)
		cfg.Incarnation = n.incarnation
		n.router, err = durable.NewRouter(cfg)
		n.m = n.router
	case kindSHB:
		cfg := w.shbConfig(n.name)
		cfg.Rand = rand.New(rand.NewPCG(w.rng.Uint64(), n.incarnation)) // nack jitter
		n.shb, err = durable.NewSHB(cfg, st)
		n.m = n.shb
	case kindReplica:
		n.m, err = w.bootReplica(n)
	}
	if err != nil {
		return fmt.Errorf("boot %s: %w", n.name, err)
	}
	n.up = true
	n.host.SetBrokers(n.m)
	w.flush(n)
	w.scheduleTimer(n, n.incarnation)
	return nil
}

func (w *world) scheduleTimer(n *node, inc uint64) {
	w.q.add(&item{at: w.now + timerPeriod, fn: func() {
		if !n.up || n.incarnation != inc {
			return
		}
		if err := n.m.Tick(w.clock(n)); err != nil {
			w.violate("%s: tick: %v", n.name, err)
		}
		if n.kind == kindReplica {
			w.timerReplica(n)
		}
		w.flush(n)
		w.scheduleTimer(n, inc)
	}})
}

// deliverToNode hands a message to a broker (dropped if it is down). A
// broker steps one message per StepCost: what arrives while it is busy
// waits in its inbox, in arrival order.
func (w *world) deliverToNode(n *node, env durable.Envelope) {
	if !n.up {
		return
	}
	if w.cfg.StepCost < 0 {
		w.stepNode(n, env)
		return
	}
	n.inbox = append(n.inbox, env)
	if !n.draining {
		n.draining = true
		inc := n.incarnation
		w.at(max(w.now, n.busyUntil), func() { w.drainNode(n, inc) })
	}
}

// drainNode steps the oldest message of a broker's inbox and schedules
// the next one StepCost later.
func (w *world) drainNode(n *node, inc uint64) {
	if !n.up || n.incarnation != inc {
		return // crashed: the inbox went with it (crash clears it)
	}
	env := n.inbox[0]
	n.inbox = n.inbox[1:]
	w.stepNode(n, env)
	n.busyUntil = w.now + w.cfg.StepCost
	if len(n.inbox) == 0 {
		n.draining = false
		return
	}
	w.at(n.busyUntil, func() { w.drainNode(n, inc) })
}

// stepNode steps a broker with a message.
func (w *world) stepNode(n *node, env durable.Envelope) {
	if n.kind == kindPHB && env.Msg.Kind == durable.MsgPublish && n.host.Failing() != nil {
		// As the router's driver does while its store fails.
		w.send(durable.Refusal(env, n.host.Failing().Error()))
		return
	}
	if err := n.m.Step(w.clock(n), env); err != nil {
		w.violate("%s: step %v: %v", n.name, env, err)
	}
	w.flush(n)
}

// observeDurable lets the oracle see a batch that became durable.
func (w *world) observeDurable(n *node, b *durable.Batch) {
	if n.kind == kindPHB {
		w.oracle.logged(w, n.pubend.ID(), b)
		w.oracle.releasedIn(w, n.pubend.ID(), b)
	}
	if n.kind == kindSHB {
		w.oracle.deliveredIn(w, n.name, b)
	}
}

// crash takes a node down, losing its unsynced writes (all but a random
// prefix), and schedules its restart.
func (w *world) crash(n *node) {
	if !n.up {
		return
	}
	w.takeDown(n)
	w.restartAfter(n, durable.Tick(5_000+w.rng.IntN(100_000)))
}

// takeDown takes a node down as a crash does (crash restarts it soon;
// FaultOutage and FaultJoin much later).
func (w *world) takeDown(n *node) {
	w.trace("crash %s", n.name)
	w.stats.Crashes++
	n.up = false
	if _, applied := n.host.Retry(); n.host.Failing() != nil && !applied {
		n.store.Crash(w.rng) // the failed batch never reached the store
	} else if b := n.host.InFlight(); b != nil {
		if kept := n.store.Crash(w.rng); kept > 0 {
			w.observeDurable(n, &b.Writes)
		}
	} else {
		n.store.Crash(w.rng)
	}
	n.host.Lost()
	n.inbox, n.draining = nil, false
	if n.kind == kindSHB {
		for _, s := range w.subs {
			if s.shb == n.name && s.connected {
				w.cutSubscriber(s)
			}
		}
	}
}

// restartAfter restarts a crashed node after down.
func (w *world) restartAfter(n *node, down durable.Tick) {
	w.q.add(&item{at: w.now + down, fn: func() {
		w.trace("restart %s", n.name)
		if (n.kind == kindPHB || n.kind == kindReplica) && w.cfg.has(FaultClock) {
			w.stepClockBack(n) // a machine may come back with its clock behind
		}
		if err := w.boot(n); err != nil {
			w.violate("%v", err)
		}
	}})
}

// wipe crashes an SHB and gives it an empty store for its restart. Its
// subscribers present their CTs when they come back (s.startedAt no
// longer names an SHB that knows them).
func (w *world) wipe(n *node) {
	w.trace("wipe %s", n.name)
	w.stats.Wipes++
	w.crash(n)
	n.store = memstore.New()
	for _, s := range w.subs {
		if s.startedAt == n.name {
			s.startedAt = ""
		}
	}
}

// clock returns a node's reading of the time: simulated time plus its skew.
func (w *world) clock(n *node) durable.Tick { return w.now + n.skew }

// maxSkewBack bounds how far a PHB's clock may fall behind in a run.
const maxSkewBack = 300_000

// stepClockBack sets a PHB's clock back by up to 150 ms (an NTP step, or a
// restart on a machine whose clock is behind), at most maxSkewBack in all.
// The pubend must still never announce a tick again with other content
// (rules T1 and T2); the oracle checks every announcement.
func (w *world) stepClockBack(n *node) {
	back := min(durable.Tick(1+w.rng.IntN(150_000)), maxSkewBack+n.skew)
	if back <= 0 {
		return
	}
	n.skew -= back
	w.stats.ClockSteps++
	w.trace("clock of %s steps back %d us (skew %d)", n.name, back, n.skew)
}
