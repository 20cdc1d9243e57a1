package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/replica"
)

// group is a replicated pubend (Config.Replicas > 1): its PHB name (the
// pubend's Node, the address publishers and routers send to) stands for
// replicas phbN.a, phbN.b, ..., one of which leads. The mesh follows the
// leader: each replica that becomes the PHB announces it to the pubend's
// router, and announces it again every timer while it leads; what is sent
// to the PHB name goes to the replica the router last heard from with the
// highest raft term (a stale announcement, or one across a cut link, is
// not heard).
type group struct {
	phb      string
	pubend   string
	replicas []string
	route    string // the replica messages to phb go to
	term     uint64 // the raft term of the route's announcement
	// applied: the digest of the entry applied at each index, by the
	// first replica that applied it; every other must apply the same.
	applied map[uint64]uint64
	wiped   bool // one replica's disk was wiped (at most one per run)
	// catchUp is the commit index every replica must apply before the run
	// is caught up (replicaBehind).
	catchUp uint64
}

// replicaTick is the simulated raft tick: elections time out after 50
// to 100 ms without a leader.
const replicaTick = 5_000

func replicaName(phb string, i int) string { return fmt.Sprintf("%s.%c", phb, 'a'+i) }

// addGroup adds the replicas of PHB i.
func (w *world) addGroup(i int) {
	g := &group{phb: phbName(i), pubend: pubendName(i), applied: map[uint64]uint64{}}
	for r := range w.cfg.Replicas {
		name := replicaName(g.phb, r)
		g.replicas = append(g.replicas, name)
		w.addNode(name, kindReplica)
		w.nodes[name].group = g
	}
	w.groups[g.phb] = g
}

// bootReplica (re)creates a replica from its store; a wiped store joins
// under a fresh id. Replicas run on machines whose clocks differ (up to
// 50 ms behind), so a new leader's clock may be behind its predecessor's.
func (w *world) bootReplica(n *node) (durable.Broker, error) {
	if n.incarnation == 1 {
		h := fnv.New64a()
		h.Write([]byte(n.name))
		n.skew = -durable.Tick((h.Sum64() ^ w.cfg.Seed) % 50_000)
	}
	cfg := replica.Config{Pubend: w.phbConfig(n.group.phb), Name: n.name, Replicas: n.group.replicas,
		Join: n.wiped, Rand: rand.New(rand.NewPCG(w.rng.Uint64(), n.incarnation)), TickPeriod: replicaTick,
		CompactEvery: 64, CompactKeep: 16}
	if w.cfg.Seed%4 != 0 {
		cfg.Preferred = n.group.replicas[0] // three seeds in four; the fourth leaves leadership where elections put it
	}
	r, err := replica.New(cfg, n.store)
	if err != nil {
		return nil, err
	}
	n.replica = r
	return replicaBroker{r}, nil
}

// replicaBroker lets the node machinery step and tick a replica; its
// Readies are taken by flushReplica.
type replicaBroker struct{ r *replica.Replica }

func (b replicaBroker) Step(now durable.Tick, env durable.Envelope) error { return b.r.Step(now, env) }
func (b replicaBroker) Tick(now durable.Tick) error                       { return b.r.Tick(now) }
func (b replicaBroker) Ready() durable.Ready                              { return durable.Ready{} }

// flushReplica carries out a replica's Ready: apply its writes, send what
// needs no sync (PeerNow, Msgs), sync the writes if asked (a simulated
// disk's latency, during which the replica keeps stepping and its next
// Ready waits; a crash then loses them), then send Peer and advance.
// During the sync, what the replica may do meanwhile is carried out at
// once (flushReplicaInFlight); the sync covers only the batches applied
// before it started, as a disk's would.
func (w *world) flushReplica(n *node) {
	if !n.up {
		return
	}
	if n.replica.InFlight() {
		w.flushReplicaInFlight(n)
		return
	}
	rd := n.replica.Ready()
	if rd.Empty() {
		return
	}
	if err := n.store.Apply(rd.Writes, false); err != nil {
		w.violate("%s: apply: %v", n.name, err)
		return
	}
	covered := n.store.Unsynced()
	w.observeApplied(n, rd.Applied)
	if rd.Leading != nil && *rd.Leading {
		w.stats.LeaderChanges++
		w.trace("%s leads %s (term %d)", n.name, n.group.pubend, n.replica.Status().GetTerm())
		w.announceLeader(n)
	}
	for _, m := range rd.PeerNow {
		w.sendPeer(m)
	}
	w.sendAll(rd.Msgs, n.name)
	done := func() {
		for _, m := range rd.Peer {
			w.sendPeer(m)
		}
		n.replica.Advance()
		w.flushReplica(n)
	}
	if !rd.Sync {
		done()
		return
	}
	inc := n.incarnation
	w.at(w.now+w.replicaSyncLatency(n), func() {
		if !n.up || n.incarnation != inc {
			return // crashed during the sync: its messages are never sent
		}
		if w.chaos && w.cfg.has(FaultCrash) && w.rng.Float64() < 0.01 {
			w.crash(n)
			return
		}
		n.store.SyncN(covered)
		done()
	})
}

// slowReplicaDisk makes the syncs of each group's first replica (the
// preferred leader on most seeds) this many times as long on one seed in
// four: a follower's answer (two link latencies and its own sync) then
// often arrives while that leader's sync still runs, so it proposes
// during its syncs (replica.ReadyInFlight), as a leader does whose disk
// is slower than the network and the other replicas' disks.
const slowReplicaDisk = 20

// replicaSyncLatency draws the time one sync of n's store takes.
func (w *world) replicaSyncLatency(n *node) durable.Tick {
	d := durable.Tick(syncBase + w.rng.IntN(syncJitter))
	if w.cfg.Seed%4 == 1 && n.name == n.group.replicas[0] {
		d *= slowReplicaDisk
	}
	return d
}

// flushReplicaInFlight carries out a replica's ReadyInFlight while its
// sync runs: apply the committed entries (the running sync does not
// cover them; they need none) and send what they release, at once.
func (w *world) flushReplicaInFlight(n *node) {
	pipelined := n.replica.Stats.Pipelined
	rd := n.replica.ReadyInFlight()
	w.stats.Pipelined += n.replica.Stats.Pipelined - pipelined
	if rd.Empty() {
		return
	}
	if err := n.store.Apply(rd.Writes, false); err != nil {
		w.violate("%s: apply: %v", n.name, err)
		return
	}
	w.stats.EarlyApplies++
	w.observeApplied(n, rd.Applied)
	for _, m := range rd.PeerNow {
		w.sendPeer(m)
	}
	w.sendAll(rd.Msgs, n.name)
}

// sendAll sends messages of node from, dropping those a partition cuts.
func (w *world) sendAll(msgs []durable.Envelope, from string) {
	for _, env := range msgs {
		if w.chaos && w.partitioned(from, env.To) {
			w.stats.Dropped++
			continue
		}
		w.send(env)
	}
}

// observeApplied checks that every replica applies the same entry at each
// index (consensus), and shows the oracle each committed entry once: a
// committed entry is durable on a majority, whichever replica applies it.
func (w *world) observeApplied(n *node, as []replica.Applied) {
	g := n.group
	for _, a := range as {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/", a.Term)
		h.Write(a.Data)
		d := h.Sum64()
		if old, ok := g.applied[a.Index]; ok {
			if old != d {
				w.violate("%s applied another entry at index %d than its group did before (replicas diverge)", n.name, a.Index)
			}
			continue
		}
		g.applied[a.Index] = d
		if len(a.Ops) > 0 {
			b := &durable.Batch{Ops: a.Ops}
			w.oracle.logged(w, g.pubend, b)
			w.oracle.releasedIn(w, g.pubend, b)
		}
	}
}

// announceLeader tells the pubend's router, after a link latency, that
// n leads; a cut link loses it.
func (w *world) announceLeader(n *node) {
	router := w.topo.phbRouter(n.group.phb)
	term := n.replica.Status().GetTerm()
	if w.chaos && w.partitioned(n.name, router) {
		return
	}
	w.at(w.now+w.latency(), func() {
		g := n.group
		if term >= g.term && g.route != n.name {
			w.trace("route %s -> %s (term %d)", g.phb, n.name, term)
		}
		if term >= g.term {
			g.route, g.term = n.name, term
		}
	})
}

// deliverToGroup hands a message for a replicated PHB to the replica the
// router routes it to.
func (w *world) deliverToGroup(g *group, env durable.Envelope) {
	n, ok := w.nodes[g.route]
	if !ok {
		w.stats.Dropped++
		return
	}
	if w.chaos && w.partitioned(env.From, n.name) {
		w.stats.Dropped++
		return
	}
	w.deliverToNode(n, env)
}

// sendPeer sends a message between replicas: lost on a cut link, with
// the drop, duplication, reorder and delay faults of broker links.
func (w *world) sendPeer(m replica.PeerMsg) {
	if w.chaos && (w.partitioned(m.From, m.To) || (w.cfg.has(FaultDrop) && w.rng.Float64() < 0.05)) {
		w.stats.Dropped++
		return
	}
	copies := 1
	if w.chaos && w.cfg.has(FaultDup) && w.rng.Float64() < 0.04 {
		copies = 2
	}
	for range copies {
		w.at(w.now+w.latency(), func() {
			n := w.nodes[m.To]
			if n == nil || !n.up {
				return
			}
			if err := n.replica.StepPeer(w.clock(n), m.Data); err != nil {
				w.violate("%s: step peer message from %s: %v", n.name, m.From, err)
			}
			w.flush(n)
		})
	}
}

// timerReplica runs with every timer of a replica: while it leads, it
// announces it again (as the directory resends its table).
func (w *world) timerReplica(n *node) {
	if n.replica.Leading() {
		w.announceLeader(n)
	}
}

// scheduleReplicaFaults plans the faults of replicated pubends, from
// their own random source (so the other faults' draws stay as they
// were): with FaultCrash, each group's leader is killed once or twice
// while events are published; with FaultCrash or FaultWipe, one replica
// of one group has its disk wiped (it restarts empty and joins under a
// fresh id); with
// FaultPartition, links between replicas, and between a replica and its
// router, are cut for a while.
func (w *world) scheduleReplicaFaults(chaosEnd durable.Tick) {
	if w.cfg.Replicas <= 1 {
		return
	}
	rng := rand.New(rand.NewPCG(w.cfg.Seed, 0x4ea1))
	randTime := func() durable.Tick { return durable.Tick(rng.IntN(int(chaosEnd))) }
	phbs := slices.Sorted(mapKeys(w.groups))
	if w.cfg.has(FaultCrash) {
		for _, phb := range phbs {
			g := w.groups[phb]
			for range 1 + rng.IntN(2) {
				w.at(randTime(), func() {
					if n := w.nodes[g.route]; w.chaos && n != nil && n.replica.Leading() {
						w.trace("kill leader %s", n.name)
						w.crash(n)
					}
				})
			}
		}
	}
	if w.cfg.has(FaultCrash) || w.cfg.has(FaultWipe) {
		g := w.groups[phbs[rng.IntN(len(phbs))]]
		victim := g.replicas[rng.IntN(len(g.replicas))]
		w.at(randTime(), func() {
			if !w.chaos || g.wiped {
				return
			}
			n := w.nodes[victim]
			g.wiped = true
			w.wipe(n)
			n.wiped = true
		})
	}
	if w.cfg.has(FaultPartition) {
		for range 1 + rng.IntN(3) {
			g := w.groups[phbs[rng.IntN(len(phbs))]]
			a := g.replicas[rng.IntN(len(g.replicas))]
			b := g.replicas[rng.IntN(len(g.replicas))]
			if a == b {
				b = w.topo.phbRouter(g.phb)
			}
			d := durable.Tick(10_000 + rng.IntN(150_000))
			w.at(randTime(), func() {
				w.trace("partition %s|%s for %d", a, b, d)
				w.stats.Partitions++
				w.cuts[linkKey(a, b)] = w.now + d
			})
		}
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// replicaLagging describes what a replicated pubend has not done yet
// ("" when done): every replica up, every replica's log released, and
// every replica caught up with its group's leader.
func (w *world) replicaLagging(n *node) string {
	if n.retired {
		return ""
	}
	if n.replica == nil {
		return n.name + " is down"
	}
	if s := w.membersLagging(n.group); s != "" {
		return s
	}
	p := n.group.pubend
	pre := append(replica.StatePrefix(p), durable.PHBLogPrefix(p)...)
	if k := n.store.Keys(pre); len(k) > 0 {
		return fmt.Sprintf("%s still logs %d events (leader %q)", n.name, len(k), n.replica.Leader())
	}
	return w.replicaBehind(n)
}

// replicaBehind describes how replica n is behind its group (""
// when it is not): once the faults heal, every replica must apply every
// entry committed by then, or a later leader change could stall on a
// replica that never heard of entries committed long before. The target
// is the leader's commit index the first time it is asked (a leader
// keeps committing, silences' tick marks among others, so the replicas
// seldom show one index at one instant).
func (w *world) replicaBehind(n *node) string {
	g := n.group
	if g.catchUp == 0 {
		for _, name := range g.replicas {
			if m := w.nodes[name]; m.up && m.replica != nil && m.replica.Leading() {
				g.catchUp = m.replica.Status().GetCommit()
			}
		}
		if g.catchUp == 0 {
			return fmt.Sprintf("%s: no replica of %s leads", n.name, g.pubend)
		}
	}
	if st := n.replica.Status(); st.Applied < g.catchUp {
		return fmt.Sprintf("%s has applied %d (commit %d, term %d) of the %d entries its group had committed",
			n.name, st.Applied, st.GetCommit(), st.GetTerm(), g.catchUp)
	}
	return ""
}
