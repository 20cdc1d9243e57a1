package router

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/replica"
	"github.com/sift-pubsub/sift/internal/wire"
)

// A replicated pubend (DurableConfig.Replicas, docs/replication.md) runs
// one replica (package durable/replica) on each router it names. The
// replica joins the router's group commit through replicaHost (a
// durable.Broker): its writes go in the router's batch, its raft
// messages leave, as replica frames over the links, once that batch is
// synced, and it is advanced at the next Take. While it leads, this
// router hosts the pubend: the directory announces it (SetLocal, with a
// version above the previous leader's), every router routes the pubend's
// knowledge from here, and publishers are served here; the other
// replicas' routers refuse publishers with the leader's name.

// replicaHost is this router's replica of one replicated pubend.
type replicaHost struct {
	pubend  string
	node    string // the pubend's node id while this replica leads
	r       *replica.Replica
	advance bool              // a Ready was taken: Advance before the next one
	peers   []replica.PeerMsg // of the Readies taken, to send once synced
	now     []replica.PeerMsg // of the Readies taken, to send at once
	// leading and leader mirror the replica's state for the connection
	// goroutines (fromClient); the driver sets them in followLeaders.
	leading atomic.Bool
	leader  atomic.Pointer[string]
	// publishers are the clients that published here while this replica
	// led (driver goroutine): when it stops leading they are refused as
	// not leading, so they move on to the new leader instead of waiting
	// on acknowledgements that will not come.
	publishers map[string]bool
}

func (h *replicaHost) Step(now durable.Tick, env durable.Envelope) error { return h.r.Step(now, env) }
func (h *replicaHost) Tick(now durable.Tick) error                       { return h.r.Tick(now) }

// Ready advances the replica past its previous Ready (whose writes are
// synced and messages sent: the group commit takes Readies only then) and
// takes the next one. The pubend's messages it releases are early (they
// come from committed entries), and so are the raft messages that need no
// sync (sendReplicaNow): the leader's appends leave while its sync runs.
func (h *replicaHost) Ready() durable.Ready {
	if h.advance {
		h.r.Advance()
		h.advance = false
	}
	rd := h.r.Ready()
	if rd.Empty() {
		return durable.Ready{}
	}
	h.advance = true
	h.peers = append(h.peers, rd.Peer...)
	h.now = append(h.now, rd.PeerNow...)
	return durable.Ready{Writes: rd.Writes, Sync: rd.Sync, Early: rd.Msgs}
}

// flushInFlight carries out, while the group commit's sync runs, what a
// leading replica may do meanwhile (replica.ReadyInFlight): apply the
// entries committed since, unsynced (they need no sync; a later sync
// covers them anyway), and send the messages they release and raft's
// messages that need no sync at once. The messages for this router's
// machines are appended to local.
func (d *durableNode) flushInFlight(local []durable.Envelope) []durable.Envelope {
	for _, p := range sortedNames(d.replicas) {
		h := d.replicas[p]
		rd := h.r.ReadyInFlight()
		if rd.Empty() {
			continue
		}
		if err := d.store.Apply(rd.Writes, false); err != nil {
			d.log.Error("durable replica stopped: committed entries not applied", "pubend", p, "err", err)
			h.r.Fail(fmt.Errorf("apply during a sync: %w", err))
			continue
		}
		d.met.writes.Add(float64(len(rd.Writes.Ops)))
		d.sendPeerMsgs(rd.PeerNow)
		local = d.send(rd.Msgs, local)
	}
	return local
}

// bootReplicas creates the replicas of the replicated pubends naming this
// router.
func (d *durableNode) bootReplicas(shbs []string) error {
	d.replicaIn = make(chan durableInput, 4096)
	d.replicas = map[string]*replicaHost{}
	d.replicaByNode = map[string]*replicaHost{}
	for _, p := range sortedNames(d.cfg.Replicas) {
		names := d.cfg.Replicas[p]
		if !slices.Contains(names, d.name) {
			continue
		}
		var seed [16]byte
		if _, err := rand.Read(seed[:]); err != nil {
			return fmt.Errorf("durable: replica seed: %w", err)
		}
		node := pubendNode(d.name, p)
		r, err := replica.New(replica.Config{
			Pubend: durable.PubendConfig{ID: p, Node: node, Downstream: []string{d.name}, SHBs: shbs, LearnSHBs: true,
				MaxRetain: microsOf(d.cfg.MaxRetain), DropAfter: microsOf(d.cfg.DropAfter), WipeGrace: microsOf(d.cfg.WipeGrace)},
			Name: d.name, Replicas: names, Preferred: names[0], Join: d.cfg.ReplicaJoin,
			Rand:       mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))),
			TickPeriod: microsOf(replicaTick), ElectionTicks: replicaElectionTicks,
			MaxMsgSize: replicaMaxMsg,
		}, d.store)
		if err != nil {
			return fmt.Errorf("durable: %w", err)
		}
		h := &replicaHost{pubend: p, node: node, r: r}
		d.replicas[p] = h
		d.replicaByNode[node] = h
	}
	return nil
}

// Replica timing: a raft tick of 50 ms and elections after 0.5 to 1 s
// without a leader, well within the 2 s failover the issue asks for.
const (
	replicaTick          = 50 * time.Millisecond
	replicaElectionTicks = 10
	replicaMaxMsg        = 256 << 10 // raft messages well within a link's frames
)

// replicaBrokers returns the replicas as brokers for the group commit.
func (d *durableNode) replicaBrokers() []durable.Broker {
	var bs []durable.Broker
	for _, p := range sortedNames(d.replicas) {
		bs = append(bs, d.replicas[p])
	}
	return bs
}

// sendReplicaPeers sends the raft messages of the Readies taken (their
// writes are synced) and follows changes of leadership: the directory
// announces the pubends this router leads.
func (d *durableNode) sendReplicaPeers() {
	for _, p := range sortedNames(d.replicas) {
		h := d.replicas[p]
		d.sendPeerMsgs(h.peers)
		h.peers = nil
	}
	d.followLeaders()
}

// sendReplicaNow sends the raft messages of the Readies just taken that
// need no sync.
func (d *durableNode) sendReplicaNow() {
	for _, p := range sortedNames(d.replicas) {
		h := d.replicas[p]
		d.sendPeerMsgs(h.now)
		h.now = nil
	}
}

// sendPeerMsgs sends raft messages of this router's replicas toward the
// routers of the replicas they are for.
func (d *durableNode) sendPeerMsgs(ms []replica.PeerMsg) {
	for _, m := range ms {
		d.toReplica(&wire.Replica{From: d.name, To: m.To, Data: m.Data}, "")
	}
}

// followLeaders announces the local pubends and the replicated ones
// whose replica leads here.
func (d *durableNode) followLeaders() {
	if len(d.replicas) == 0 {
		return
	}
	local := d.cfg.local(d.name)
	for _, p := range sortedNames(d.replicas) {
		h := d.replicas[p]
		leader := h.r.Leader()
		if was := h.leader.Load(); was == nil || *was != leader {
			st := h.r.Status()
			d.log.Info("durable replica leader", "pubend", p, "leader", leader, "term", st.GetTerm(), "state", st.RaftState.String())
		}
		h.leader.Store(&leader)
		if h.leading.Swap(h.r.Leading()) && !h.r.Leading() {
			d.refusePublishers(h)
		}
		if h.r.Leading() {
			local = append(local, p)
		}
	}
	slices.Sort(local)
	if !slices.Equal(local, d.dir.Local()) {
		d.dir.SetLocal(local, uint64(now()))
		d.log.Info("durable replicated pubends led here", "pubends", fmt.Sprint(local))
		signal(d.topo)
	}
}

// refusePublishers tells the clients that published to h's pubend here
// that this router no longer leads it.
func (d *durableNode) refusePublishers(h *replicaHost) {
	refusal := d.notLeader(h.pubend, h.r.Leader())
	var out []durable.Envelope
	for _, c := range sortedNames(h.publishers) {
		out = append(out, durable.Envelope{From: h.node, To: c, Msg: refusal})
	}
	h.publishers = nil
	if len(out) > 0 {
		d.log.Info("durable replica stopped leading: publishers refused", "pubend", h.pubend, "publishers", len(out))
		d.send(out, nil)
	}
}

// toReplica sends a replica frame toward its router: on the link whose
// side reaches it, or, when no link says it does (a neighbour's reach not
// updated yet), on every link but the one it came from (the mesh is a
// tree, so the flood ends). It never goes back on the link it came from:
// that neighbour sent it here for want of a route of its own (its link
// toward the router is down) while this side's reach still says the
// router is behind it, and sending it back would pass it between the two
// for as long as that lasts. Dropped instead, like a frame with no link
// at all: raft sends again.
func (d *durableNode) toReplica(m *wire.Replica, from string) {
	frame := wire.AppendFrame(nil, m)
	d.mu.Lock()
	var ls []*durableLink
	if l := d.linkToward(m.To); l != nil {
		if l.peer != from {
			ls = []*durableLink{l}
		}
	} else {
		for _, peer := range sortedNames(d.links) {
			if peer != from {
				ls = append(ls, d.links[peer])
			}
		}
	}
	d.mu.Unlock()
	for _, l := range ls {
		d.queueFrame(l, frame)
	}
}

// relayReplica (link reader goroutines) passes a replica frame for
// another router straight to the lane of the link toward it, without the
// driver: a router between two replicas relays their raft messages
// whatever its durable side is busy with. It reports false when no link
// is known to lead there (the driver floods it then). A full lane drops
// the frame: raft sends again.
func (d *durableNode) relayReplica(from string, m *wire.Replica) bool {
	d.mu.Lock()
	l := d.linkToward(m.To)
	d.mu.Unlock()
	if l == nil || l.peer == from {
		return false
	}
	if !l.c.q.pushControl(wire.AppendFrame(nil, m)) {
		d.met.linkDropped.Inc()
	}
	return true
}

// stepReplicaFrame handles a replica frame from the link to peer: for
// this router, the replica of its pubend steps it; for another, it goes
// on toward it.
func (d *durableNode) stepReplicaFrame(peer string, m *wire.Replica) {
	if m.To != d.name {
		d.toReplica(m, peer)
		return
	}
	p, _, err := replica.DecodePeer(m.Data)
	if err != nil {
		d.met.refused.Inc()
		d.log.Debug("durable replica frame refused", "from", m.From, "err", err)
		return
	}
	h := d.replicas[p]
	if h == nil {
		d.log.Debug("durable replica frame for a pubend not replicated here", "pubend", p, "from", m.From)
		return
	}
	if err := h.r.StepPeer(now(), m.Data); err != nil {
		d.met.refused.Inc()
		d.log.Debug("durable replica frame refused", "from", m.From, "err", err)
	}
}

// replicaTarget (connection goroutines) says where a publisher's message for pubend p goes when
// p is replicated here: the replica's pubend node while it leads, else
// a refusal naming the leader. ok is false for a pubend not replicated
// here.
func (d *durableNode) replicaTarget(p string) (to string, refusal *durable.Msg, ok bool) {
	h := d.replicas[p]
	if h == nil {
		return "", nil, false
	}
	if h.leading.Load() {
		return h.node, nil, true
	}
	leader := ""
	if l := h.leader.Load(); l != nil {
		leader = *l
	}
	r := d.notLeader(p, leader)
	return "", &r, true
}

// notLeader is a not-leader refusal of pubend p, naming the leader this
// router knows of in its fields (for clients of wire.VersionLeader) and
// in its reason (for people, and older clients).
func (d *durableNode) notLeader(p, leader string) durable.Msg {
	return durable.Msg{Kind: durable.MsgRefused, Pubend: p, Reason: replica.NotLeaderReason(p, d.name, leader),
		NotLeader: true, Leader: leader}
}

// stepReplica steps a message for a replica's pubend node. A publisher's
// message reaching a replica that no longer leads is answered with a
// not-leader refusal, so the publisher moves on to the leader's router.
func (d *durableNode) stepReplica(h *replicaHost, t durable.Tick, env durable.Envelope) error {
	if !h.r.Leading() && isClientNode(env.From) && (env.Msg.Kind == durable.MsgPublish || env.Msg.Kind == durable.MsgHello) {
		// From the replica itself: the flag the connection goroutines
		// read may not say yet that it stopped leading.
		refusal := d.notLeader(h.pubend, h.r.Leader())
		refusal.Publisher = env.Msg.Publisher
		d.send([]durable.Envelope{{From: h.node, To: env.From, Msg: refusal}}, nil)
		return nil
	}
	if isClientNode(env.From) && env.Msg.Kind == durable.MsgHello {
		if h.publishers == nil {
			h.publishers = map[string]bool{}
		}
		h.publishers[env.From] = true
	}
	return h.Step(t, env)
}

// The replicas come first in the driver: their frames have an input of
// their own (replicaIn), served before the rest, and they tick on time,
// so that a driver saturated by other input (the intermediate broker's
// work after a route change) still elects and heartbeats. drain stops
// when they need it (replicasUrgent); the loop then serves them and
// flushes.

// inputReplica queues a replica frame for the driver (link readers).
func (d *durableNode) inputReplica(in durableInput, stop <-chan struct{}) bool {
	select {
	case d.replicaIn <- in:
		return true
	case <-stop:
		return false
	}
}

// replicasUrgent reports whether replica frames wait or the replicas'
// tick is due.
func (d *durableNode) replicasUrgent() bool {
	return len(d.replicas) > 0 && (len(d.replicaIn) > 0 || time.Since(d.replicaTicked) >= tickPeriod)
}

// serveReplicas steps the waiting replica frames and ticks the replicas
// when due.
func (d *durableNode) serveReplicas() {
	if len(d.replicas) == 0 {
		return
	}
	for range maxDrain {
		select {
		case in := <-d.replicaIn:
			d.stepInput(in)
			continue
		default:
		}
		break
	}
	if time.Since(d.replicaTicked) >= tickPeriod {
		d.tickReplicas(now())
	}
}

// tickReplicas fires the replicas' timers.
func (d *durableNode) tickReplicas(t durable.Tick) {
	d.replicaTicked = time.Now()
	for _, p := range sortedNames(d.replicas) {
		if err := d.replicas[p].r.Tick(t); err != nil {
			d.log.Warn("durable replica tick", "pubend", p, "err", err)
		}
	}
}

// learnReplicas makes the pubends led here wait for every router known.
func (d *durableNode) learnReplicas() {
	for _, p := range sortedNames(d.replicas) {
		pe := d.replicas[p].r.Pubend()
		if pe == nil {
			continue
		}
		for _, r := range d.dir.Routers() {
			if pe.AddSHB(shbID(r)) {
				d.log.Info("durable member learned", "pubend", p, "shb", shbID(r))
			}
		}
	}
}

// replicaStatus describes the replicas for /debug/durable (driver
// goroutine).
func (d *durableNode) replicaStatus() []DurableReplicaStatus {
	var out []DurableReplicaStatus
	for _, p := range sortedNames(d.replicas) {
		out = append(out, d.statusOf(d.replicas[p]))
	}
	return out
}

// statusOf describes one replica (driver goroutine).
func (d *durableNode) statusOf(h *replicaHost) DurableReplicaStatus {
	r := h.r
	st := r.Status()
	return DurableReplicaStatus{Pubend: h.pubend, Name: r.Name(), ID: r.ID(), State: st.RaftState.String(),
		Leader: r.Leader(), Leading: r.Leading(), Voter: r.Voter(), Term: st.GetTerm(), Commit: st.GetCommit(), Applied: st.Applied,
		Voters: r.Voters(), Learners: r.Learners(), Roster: r.Roster(), Progress: r.Progress()}
}
