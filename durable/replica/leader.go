package replica

import (
	"fmt"

	"github.com/sift-pubsub/sift/durable"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// leader is what a replica holds while it leads: the pubend (once its
// fence is applied), the overlay it reads through, and the pubend's
// messages waiting for their proposals to commit.
type leader struct {
	term       uint64 // the raft term it leads in
	activation uint64 // names this activation in its proposals
	fenced     bool   // the fence is proposed
	// fenceApplied: the fence is applied by the Ready in flight; the
	// pubend starts once the driver applied that Ready's writes (they
	// hold the entries before the fence), at the next Step, Tick, Ready
	// or Advance.
	fenceApplied bool
	seq          uint64 // the last proposal's sequence number (the fence is 1)
	appliedSeq   uint64 // the last of its proposals applied
	pubend       *durable.Pubend
	ov           *overlay
	held         []heldMsgs
	confWait     bool // a membership change is proposed, not yet applied
	// transfer is the replica leadership is being handed to (learner.go):
	// no fence is proposed until raft gives the transfer up.
	transfer uint64
	// preferWait counts down the raft ticks before the next handover to
	// the preferred replica may start (prefer.go).
	preferWait int
	rosterWait bool // a roster change is proposed, not yet applied (members.go)
	// heard holds the voters heard from in this term since the last
	// quorum check, quorumTicks the raft ticks since it (quorum.go).
	heard       map[uint64]bool
	heardLast   map[uint64]bool // heard in the previous quorum period
	quorumTicks int
}

// heldMsgs are the messages of one pubend Ready: they leave once the
// proposal numbered barrier (the last one made up to that Ready) is
// applied.
type heldMsgs struct {
	barrier uint64
	msgs    []durable.Envelope
}

// checkLeadership starts leading (by proposing a fence) when raft made
// this replica leader, and stops when it no longer is.
func (r *Replica) checkLeadership() {
	st := r.rn.BasicStatus()
	isLeader := st.RaftState == raft.StateLeader
	if r.lead.term != 0 && (!isLeader || st.GetTerm() != r.lead.term) {
		r.stopLeading()
	}
	if isLeader && r.lead.term == 0 {
		r.Stats.Activations++
		r.lead = leader{term: st.GetTerm(), activation: st.GetTerm()<<16 | uint64(r.Stats.Activations&0xffff), heard: map[uint64]bool{}}
	}
	if isLeader && r.lead.transfer != 0 && st.LeadTransferee == 0 {
		r.lead.transfer = 0 // raft gave the transfer up: serve again
	}
	if isLeader && !r.lead.fenced && r.lead.transfer == 0 {
		r.proposeFence()
	}
}

// proposeFence proposes the entry the pubend waits for: once it is
// applied, every entry before it is too, so the pubend recovered then
// has every state change an earlier leader may have had committed.
func (r *Replica) proposeFence() {
	p := proposal{Proposer: r.id, Activation: r.lead.activation, Seq: 1, Fence: true}
	if err := r.rn.Propose(p.encode()); err != nil {
		return // tried again at the next Step or Tick
	}
	r.lead.fenced, r.lead.seq = true, 1
}

// stopLeading drops the pubend and everything it has not yet made
// committed state: its pending proposals may still commit (the next
// leader applies them and recovers from them), but nothing it held back
// is sent.
func (r *Replica) stopLeading() {
	r.lead = leader{}
	r.leadingChanged()
}

// startLeading recovers the pubend from the committed state once the
// fence is applied and the writes of the Ready that applied it are in
// the store.
func (r *Replica) startLeading() {
	if !r.lead.fenceApplied || r.inFlight || r.fatal != nil {
		return
	}
	r.lead.fenceApplied = false
	r.lead.ov = &overlay{base: r.state}
	p, err := durable.NewPubend(r.cfg.Pubend, r.lead.ov)
	if err != nil {
		r.fatal = fmt.Errorf("replica %s: %w", r.cfg.Name, err)
		return
	}
	r.lead.pubend = p
	r.leadingChanged()
}

func (r *Replica) leadingChanged() {
	v := r.lead.pubend != nil
	if r.leadingWas != v {
		r.leadingWas = v
		r.leadingNote = &v
	}
}

// proposePubend turns the pubend's Ready into a proposal (its writes) and
// held messages; it reports whether it proposed.
func (r *Replica) proposePubend() bool {
	if r.lead.pubend == nil {
		return false
	}
	rd := r.lead.pubend.Ready()
	if !rd.Writes.Empty() {
		p := proposal{Proposer: r.id, Activation: r.lead.activation, Seq: r.lead.seq + 1, Ops: rd.Writes.Ops}
		if err := r.rn.Propose(p.encode()); err != nil {
			// The pubend's state ran ahead of what raft will log: start
			// again from the committed state, after a new fence.
			r.Stats.Dropped++
			r.Stats.Activations++
			term := r.lead.term
			r.stopLeading()
			r.lead = leader{term: term, activation: term<<16 | uint64(r.Stats.Activations&0xffff), heard: map[uint64]bool{}}
			return false
		}
		r.Stats.Proposals++
		r.lead.seq++
		r.lead.ov.push(rd.Writes)
	}
	if len(rd.Msgs) > 0 {
		r.lead.held = append(r.lead.held, heldMsgs{barrier: r.lead.seq, msgs: rd.Msgs})
	}
	return !rd.Writes.Empty()
}

// proposeInFlight proposes the pubend's writes while the leader's own
// sync runs (ReadyInFlight), once some follower holds every entry of the
// log: that follower is idle, waiting for the leader, and its sync of the
// new batch can run alongside the leader's. raft lets the append leave
// before the leader's own log holds the entries (it counts the leader in
// the commit only once its sync is reported), so the commit waits for
// the leader's next sync, not for a follower's sync that would only start
// after it. Without an idle follower the writes wait for the next Ready,
// as before: proposing at every input of a sync would make one proposal
// per publish. Nothing is proposed while leadership is handed over (raft
// would drop it).
func (r *Replica) proposeInFlight() {
	if r.lead.transfer != 0 || r.rn.BasicStatus().LeadTransferee != 0 || !r.followerHasAll() {
		return
	}
	if r.proposePubend() {
		r.Stats.Pipelined++
	}
}

// followerHasAll reports whether some other voter has acknowledged every
// entry of the leader's log.
func (r *Replica) followerHasAll() bool {
	last, has := r.log.lastIndex(), false
	r.rn.WithProgress(func(id uint64, typ raft.ProgressType, pr tracker.Progress) {
		if id != r.id && typ == raft.ProgressTypePeer && !pr.IsLearner && pr.Match >= last {
			has = true
		}
	})
	return has
}

// appliedOwn records that the proposal seq of this activation was applied.
func (r *Replica) appliedOwn(p proposal) {
	if p.Fence {
		if r.lead.pubend == nil {
			r.lead.appliedSeq = p.Seq
			r.lead.fenceApplied = true
		}
		return
	}
	if r.lead.ov != nil && len(r.lead.ov.pending) > 0 {
		r.lead.ov.pop()
	}
	r.lead.appliedSeq = p.Seq
}

// releaseHeld returns the held messages whose proposals are applied.
func (r *Replica) releaseHeld() []durable.Envelope {
	n, size := 0, 0
	for _, h := range r.lead.held {
		if h.barrier > r.lead.appliedSeq {
			break
		}
		n, size = n+1, size+len(h.msgs)
	}
	if n == 0 {
		return nil
	}
	if n == 1 {
		// One Ready's messages: handed over as they are, no copy.
		out := r.lead.held[0].msgs
		r.lead.held[0] = heldMsgs{}
		r.lead.held = r.lead.held[1:]
		return out
	}
	out := make([]durable.Envelope, 0, size)
	for i := range n {
		out = append(out, r.lead.held[i].msgs...)
		r.lead.held[i] = heldMsgs{}
	}
	r.lead.held = r.lead.held[n:]
	return out
}
