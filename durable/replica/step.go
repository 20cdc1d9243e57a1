package replica

import (
	"errors"
	"fmt"

	"github.com/sift-pubsub/sift/durable"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Step handles a pubend message (from a publisher or the mesh) at time
// now. A replica that is not the PHB drops it (the sender retries, and
// the mesh follows the leader).
func (r *Replica) Step(now durable.Tick, env durable.Envelope) error {
	if r.fatal != nil {
		return r.fatal
	}
	r.startLeading()
	if r.lead.pubend == nil {
		r.Stats.NotLeader++
		return nil
	}
	if err := r.lead.pubend.Step(now, env); err != nil {
		return fmt.Errorf("replica %s: %w", r.cfg.Name, err)
	}
	return nil
}

// StepPeer handles a message from another replica. A message that does
// not decode, or names another pubend, is refused with an error and
// changes nothing.
func (r *Replica) StepPeer(now durable.Tick, data []byte) error {
	if r.fatal != nil {
		return r.fatal
	}
	m, err := decodePeer(data)
	if err != nil {
		return err
	}
	if m.Pubend != r.cfg.Pubend.ID {
		return fmt.Errorf("replica %s: peer message for pubend %q", r.cfg.Name, m.Pubend)
	}
	if m.FromID == r.id {
		return fmt.Errorf("replica %s: peer message from its own id", r.cfg.Name)
	}
	r.peers[m.FromID] = m.From
	switch m.Kind {
	case PeerChunk:
		whole, ok := r.addChunk(m.FromID, m.Chunk)
		if !ok {
			return nil
		}
		inner, err := decodePeer(whole)
		if err != nil || inner.Kind == PeerChunk || inner.FromID != m.FromID || inner.Pubend != m.Pubend {
			return fmt.Errorf("replica %s: an assembled peer message from %s: %v", r.cfg.Name, m.From, err)
		}
		return r.StepPeer(now, whole)
	case PeerJoin:
		r.join(m.From, m.FromID)
		return nil
	case PeerRaft:
		return r.stepRaft(m.Raft)
	}
	return nil
}

// stepRaft steps a raft message addressed to this replica's id; messages
// for another id (an id this name had before its store was wiped) are
// dropped.
func (r *Replica) stepRaft(m *pb.Message) error {
	if m.GetTo() != r.id || m.GetFrom() == 0 {
		return nil
	}
	switch m.GetType() {
	case pb.MsgApp, pb.MsgHeartbeat, pb.MsgSnap:
		if m.GetTerm() >= r.rn.BasicStatus().GetTerm() {
			r.elapsed = 0 // the leader is alive
		}
	}
	if raft.IsLocalMsg(m.GetType()) {
		return fmt.Errorf("replica %s: a peer sent the local message %v", r.cfg.Name, m.GetType())
	}
	if r.lead.term != 0 && m.GetTerm() == r.lead.term {
		r.lead.heard[m.GetFrom()] = true // a follower answers (quorum.go)
	}
	err := r.rn.Step(m)
	if errors.Is(err, raft.ErrStepPeerNotFound) {
		return nil // a response from a replica no longer a member
	}
	r.followTerm()
	r.checkLeadership()
	return err
}

// Tick handles a timer firing at time now: raft ticks (the leader's
// heartbeats; followers' election timer, run here from Config.Rand), a
// joining replica's requests, and the pubend's own timers while leading.
func (r *Replica) Tick(now durable.Tick) error {
	if r.fatal != nil {
		return r.fatal
	}
	r.startLeading()
	if !r.ticking {
		r.ticking, r.lastTick = true, now
	}
	n := int((now - r.lastTick) / r.cfg.TickPeriod)
	r.lastTick += durable.Tick(n) * r.cfg.TickPeriod
	for range min(n, 2*r.cfg.ElectionTicks) {
		r.raftTick()
	}
	r.checkLeadership()
	if r.lead.pubend != nil {
		if err := r.lead.pubend.Tick(now); err != nil {
			return fmt.Errorf("replica %s: %w", r.cfg.Name, err)
		}
	}
	return nil
}

func (r *Replica) raftTick() {
	st := r.rn.BasicStatus()
	if st.RaftState == raft.StateLeader {
		r.rn.Tick()
		r.checkQuorum()
		r.checkLeadership()
		r.reconcile()
		if !r.isVoter(r.id) {
			r.transferAway([]uint64{r.id}) // removed, it won an election before it heard so
			return
		}
		r.preferLeader()
		return
	}
	if !r.isVoter(r.id) {
		r.sinceJoin++
		if r.sinceJoin >= r.cfg.ElectionTicks {
			r.sinceJoin = 0
			r.askToJoin()
		}
		return
	}
	r.elapsed++
	if r.elapsed >= r.timeout {
		r.elapsed = 0
		r.newTimeout()
		_ = r.rn.Campaign() // refused only when not promotable
		r.followTerm()
	}
}

// followTerm restarts the election timer, with a new random timeout, when
// the term or the vote changed (raft restarts its own timer then: on
// becoming follower or candidate, and on granting a vote), so that two
// replicas that campaigned together, and split the vote, time out apart.
func (r *Replica) followTerm() {
	st := r.rn.BasicStatus()
	if st.GetTerm() != r.seenTerm || st.GetVote() != r.seenVote {
		r.seenTerm, r.seenVote = st.GetTerm(), st.GetVote()
		r.elapsed = 0
		r.newTimeout()
	}
}

// newTimeout draws the next election timeout, in [ElectionTicks,
// 2*ElectionTicks).
func (r *Replica) newTimeout() {
	r.timeout = r.cfg.ElectionTicks + r.cfg.Rand.IntN(r.cfg.ElectionTicks)
}

func (r *Replica) isVoter(id uint64) bool {
	for _, v := range r.applied.conf.GetVoters() {
		if v == id {
			return true
		}
	}
	for _, v := range r.applied.conf.GetVotersOutgoing() {
		if v == id {
			return true
		}
	}
	return false
}

// askToJoin sends a join request to every other replica; the leader
// answers with a membership change.
func (r *Replica) askToJoin() {
	for _, name := range r.cfg.Replicas {
		if name != r.cfg.Name {
			r.sendPeer(name, peerMsg{Kind: PeerJoin})
		}
	}
}

// sendPeer queues a message to another replica, to leave once the Ready
// that takes it is synced.
func (r *Replica) sendPeer(to string, m peerMsg) {
	r.peerOut = append(r.peerOut, r.peerPieces(to, m)...)
}

// peerPieces encodes a message to another replica: one piece, or chunks
// of a large one. An encoding failure is fatal (nothing returned).
func (r *Replica) peerPieces(to string, m peerMsg) []PeerMsg {
	m.Pubend, m.From, m.FromID = r.cfg.Pubend.ID, r.cfg.Name, r.id
	data, err := m.encode()
	if err != nil {
		r.fatal = err
		return nil
	}
	pieces, err := r.chunked(data)
	if err != nil {
		r.fatal = err
		return nil
	}
	out := make([]PeerMsg, 0, len(pieces))
	for _, p := range pieces {
		out = append(out, PeerMsg{From: r.cfg.Name, To: to, Data: p})
	}
	return out
}

func encodeMember(id uint64, name string) []byte {
	e := enc{}
	e.version(codecV1)
	e.Uvarint(id)
	e.Str(name)
	return e.B
}

func decodeMember(b []byte) (uint64, string, error) {
	d := newDec(b)
	d.version()
	id, name := d.Uvarint(), d.Str()
	return id, name, d.Done()
}
