package replica

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/durable"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Ready returns what to do next (see Ready); it returns an empty Ready
// while the previous one is not advanced. The pubend's writes since the
// previous Ready become one proposal (group commit).
//
// Raft runs with AsyncStorageWrites: its Ready hands over the writes as
// local messages (an append of entries, hard state and snapshot; an apply
// of committed entries), each with the responses to deliver once they are
// done. The append's responses wait for the sync (Peer, and raft's own,
// stepped at Advance); everything else raft sends may leave at once
// (PeerNow), so a leader's appends reach the followers while its own
// sync runs.
func (r *Replica) Ready() Ready {
	if r.inFlight || r.fatal != nil {
		return Ready{}
	}
	r.checkLeadership()
	r.startLeading()
	r.proposePubend()
	b := &durable.Batch{}
	if r.boot != nil {
		b.Ops = append(b.Ops, r.boot.Ops...)
		r.boot = nil
	}
	out := Ready{Writes: b, Sync: len(b.Ops) > 0}
	if r.deferred != nil {
		r.takeDeferred(b, &out)
	}
	if r.rn.HasReady() {
		rd := r.rn.Ready()
		if err := r.carry(rd.Messages, b, &out, false); err != nil {
			r.fatal = fmt.Errorf("replica %s: %w", r.cfg.Name, err)
			return Ready{}
		}
		out.Sync = out.Sync || rd.MustSync || rd.Snapshot != nil
		r.inFlight = true
		out.advance = true
	}
	out.Peer, out.PeerNow = r.peerOut, r.peerNow
	r.peerOut, r.peerNow = nil, nil
	r.checkLeadership()
	out.Msgs = r.releaseHeld()
	out.Leading, r.leadingNote = r.leadingNote, nil
	return out
}

// Advance tells the replica that the last Ready was carried out: its
// writes applied and synced, and its messages sent. Raft hears then that
// its appends are durable and its entries applied.
func (r *Replica) Advance() {
	if !r.inFlight {
		return
	}
	r.inFlight = false
	if !r.stepApplied() {
		return
	}
	for _, m := range r.onSynced {
		if err := r.rn.Step(m); err != nil {
			r.fatal = fmt.Errorf("replica %s: step local %v: %w", r.cfg.Name, m.GetType(), err)
			return
		}
	}
	r.onSynced = nil
	for _, id := range r.snapsTo {
		// Sent: the follower answers once it restored it; if it was lost,
		// the follower's rejection makes the leader send another.
		r.rn.ReportSnapshot(id, raft.SnapshotFinish)
	}
	r.snapsTo = nil
	r.followTerm()
	r.checkLeadership()
	r.startLeading()
}

// carry adds a raft Ready's messages to the batch and the Ready: the
// append (snapshot, entries, hard state) before the apply of committed
// entries, and the messages to other replicas. During a sync (deferAppend)
// the append goes to the deferred writes instead, for the next Ready.
// The apply's responses are stepped once its writes are in the store
// (stepApplied): applying needs no sync.
func (r *Replica) carry(msgs []*pb.Message, b *durable.Batch, out *Ready, deferAppend bool) error {
	for _, m := range msgs {
		switch m.GetTo() {
		case raft.LocalAppendThread:
			if err := r.carryAppend(m, b, deferAppend); err != nil {
				return err
			}
		case raft.LocalApplyThread:
			if err := r.applyAll(m.GetEntries(), b, out); err != nil {
				return err
			}
			r.onApplied = append(r.onApplied, m.GetResponses()...)
		default:
			r.sendRaft(m, true)
		}
	}
	return nil
}

// carryAppend adds raft's append to the batch, or, during a sync, to the
// deferred writes, with its responses for after the sync that covers it.
func (r *Replica) carryAppend(m *pb.Message, b *durable.Batch, deferAppend bool) error {
	to, synced := b, &r.onSynced
	if deferAppend {
		if r.deferred == nil {
			r.deferred = &deferredAppend{writes: &durable.Batch{}}
		}
		to, synced = r.deferred.writes, &r.deferred.onSynced
	}
	if err := r.persist(m, to); err != nil {
		return err
	}
	for _, resp := range m.GetResponses() {
		if resp.GetTo() == r.id {
			*synced = append(*synced, resp)
			continue
		}
		// To another replica once synced: Peer of the Ready whose sync
		// covers it (a deferred append's goes with the next Ready's).
		r.sendRaft(resp, false)
	}
	return nil
}

// takeDeferred puts the append deferred during the last sync at the head
// of the Ready's batch: that Ready's sync covers it, and its responses are
// stepped at that Ready's Advance.
func (r *Replica) takeDeferred(b *durable.Batch, out *Ready) {
	d := r.deferred
	r.deferred = nil
	b.Ops = append(b.Ops, d.writes.Ops...)
	r.onSynced = append(r.onSynced, d.onSynced...)
	out.Sync = true
	r.inFlight, out.advance = true, true
}

// stepApplied steps raft's responses to the applies whose writes are in
// the store; false if raft refused one (the replica is then fatal).
func (r *Replica) stepApplied() bool {
	for _, m := range r.onApplied {
		if err := r.rn.Step(m); err != nil {
			r.fatal = fmt.Errorf("replica %s: step local %v: %w", r.cfg.Name, m.GetType(), err)
			return false
		}
	}
	r.onApplied = nil
	return true
}

// ReadyInFlight is what a leader or a follower may do while its Ready is
// in flight (applied, its sync running): apply the entries committed
// since, whose writes need no sync (they are synced on a majority
// already, and raft hands over only entries this replica has synced too),
// and release the pubend's messages they held; raft's messages that need
// no sync go in PeerNow. Whatever else raft asks (an append, answers that
// wait for it) is deferred to the next Ready, whose sync covers it. So an
// acknowledgement whose commit arrives during a sync leaves at once,
// instead of a whole group-commit cycle later. A leader also proposes the
// pubend's writes then, once a follower holds every entry
// (proposeInFlight): the followers sync the next batch while the leader
// still syncs the last.
//
// The driver applies Writes to the store before the next Step, StepPeer or
// Tick, without syncing them, and sends PeerNow and Msgs at once; Sync and
// Peer are never set, and there is no Advance. It returns an empty Ready
// unless a Ready is in flight and the replica leads (its pubend running)
// or follows.
func (r *Replica) ReadyInFlight() Ready {
	if !r.inFlight || r.fatal != nil {
		return Ready{}
	}
	st := r.rn.BasicStatus()
	leading := r.lead.pubend != nil && st.RaftState == raft.StateLeader && st.GetTerm() == r.lead.term
	if !leading && (st.RaftState != raft.StateFollower || r.lead.term != 0) {
		return Ready{} // campaigning, starting or stopping to lead: the next Ready
	}
	if !r.stepApplied() {
		return Ready{}
	}
	if leading {
		r.proposeInFlight()
	}
	if !r.rn.HasReady() {
		return Ready{}
	}
	b := &durable.Batch{}
	out := Ready{Writes: b}
	if err := r.carry(r.rn.Ready().Messages, b, &out, true); err != nil {
		r.fatal = fmt.Errorf("replica %s: %w", r.cfg.Name, err)
		return Ready{}
	}
	if len(out.Applied) > 0 {
		// The applied point may reach the disk without the deferred hard
		// state: a commit at it keeps a restart within raft's bounds
		// (applied <= commit <= last entry). The term and vote are raft's
		// latest (persisting them early is safe: raft only asks that they
		// be durable before what depends on them leaves).
		hs := hardState(r.log.hard.GetTerm(), r.log.hard.GetVote(), r.applied.index)
		if err := r.log.writeHard(hs, b); err != nil {
			r.fatal = fmt.Errorf("replica %s: %w", r.cfg.Name, err)
			return Ready{}
		}
	}
	out.PeerNow, r.peerNow = r.peerNow, nil
	out.Msgs = r.releaseHeld()
	return out
}

// InFlight reports whether a Ready was taken and not yet advanced.
func (r *Replica) InFlight() bool { return r.inFlight }

// Fail stops the replica: its driver could not apply the writes of a
// ReadyInFlight, so its state ran ahead of its store. Every later call
// returns err; a restart recovers the replica from what the store holds.
func (r *Replica) Fail(err error) {
	if r.fatal == nil {
		r.fatal = fmt.Errorf("replica %s: %w", r.cfg.Name, err)
	}
}

// sendRaft queues a raft message for another replica, in PeerNow when it
// needs no sync.
func (r *Replica) sendRaft(m *pb.Message, now bool) {
	name, ok := r.peers[m.GetTo()]
	if !ok || name == r.cfg.Name {
		return // an id never heard of, or this replica's own before its store was wiped
	}
	if m.GetType() == pb.MsgSnap {
		r.snapsTo = append(r.snapsTo, m.GetTo())
	}
	pieces := r.peerPieces(name, peerMsg{Kind: PeerRaft, Raft: m})
	if now {
		r.peerNow = append(r.peerNow, pieces...)
	} else {
		r.peerOut = append(r.peerOut, pieces...)
	}
}

// persist adds raft's append to the batch: the snapshot, the entries,
// then the hard state.
func (r *Replica) persist(m *pb.Message, b *durable.Batch) error {
	if s := m.GetSnapshot(); s != nil && !raft.IsEmptySnap(s) {
		if err := r.restore(s, b); err != nil {
			return err
		}
	}
	if err := r.log.append(m.GetEntries(), b); err != nil {
		return err
	}
	if m.Term != nil || m.Vote != nil || m.Commit != nil {
		if err := r.log.setHard(hardState(m.GetTerm(), m.GetVote(), m.GetCommit()), b); err != nil {
			return err
		}
	}
	return nil
}

// applyAll applies committed entries, then records the applied point and
// compacts the log when it is due.
func (r *Replica) applyAll(ents []*pb.Entry, b *durable.Batch, out *Ready) error {
	for _, e := range ents {
		if err := r.apply(e, b, out); err != nil {
			return fmt.Errorf("apply entry %d: %w", e.GetIndex(), err)
		}
	}
	if len(ents) == 0 {
		return nil
	}
	b.Set(prefix(r.cfg.Pubend.ID, tableApplied), r.applied.encode())
	if r.applied.index-r.log.compIdx > r.cfg.CompactEvery {
		return r.log.compact(r.applied.index-r.cfg.CompactKeep, r.applied.conf, b)
	}
	return nil
}

// apply applies one committed entry: a proposal's writes to the state, or
// a membership change to the configuration.
func (r *Replica) apply(e *pb.Entry, b *durable.Batch, out *Ready) error {
	a := Applied{Index: e.GetIndex(), Term: e.GetTerm(), Data: e.GetData()}
	switch e.GetType() {
	case pb.EntryNormal:
		if len(e.GetData()) > 0 {
			p, err := decodeProposal(e.GetData())
			if err != nil {
				return err
			}
			b.Ops = r.state.appendPrefixed(b.Ops, p.Ops)
			a.Ops = p.Ops
			if err := r.appliedRoster(p.Ops); err != nil {
				return err
			}
			if p.Proposer == r.id && p.Activation == r.lead.activation && r.lead.term != 0 {
				r.appliedOwn(p)
			}
		}
	case pb.EntryConfChange, pb.EntryConfChangeV2:
		var cc pb.ConfChangeI
		if e.GetType() == pb.EntryConfChange {
			v1 := &pb.ConfChange{}
			if err := proto.Unmarshal(e.GetData(), v1); err != nil {
				return fmt.Errorf("conf change: %w", err)
			}
			cc = v1
		} else {
			v2 := &pb.ConfChangeV2{}
			if err := proto.Unmarshal(e.GetData(), v2); err != nil {
				return fmt.Errorf("conf change: %w", err)
			}
			cc = v2
			if len(v2.GetContext()) > 0 {
				id, name, err := decodeMember(v2.GetContext())
				if err != nil {
					return fmt.Errorf("conf change context: %w", err)
				}
				r.members[id], r.peers[id] = name, name
				b.Set(memberKey(r.cfg.Pubend.ID, id), []byte(name))
			}
		}
		r.applied.conf = r.rn.ApplyConfChange(cc)
		r.log.conf = r.applied.conf
		r.lead.confWait = false
		for id := range r.members {
			if !r.isVoter(id) && !r.isLearner(id) {
				delete(r.members, id)
				b.Delete(memberKey(r.cfg.Pubend.ID, id))
			}
		}
	}
	r.applied.index, r.applied.term = e.GetIndex(), e.GetTerm()
	out.Applied = append(out.Applied, a)
	return nil
}

// makeSnapshot is raft's snapshot of the applied state: every key of the
// pubend's state and the member table (relative to the pubend's prefix).
func (r *Replica) makeSnapshot() (*pb.Snapshot, error) {
	if r.applied.index == 0 {
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	base := prefix(r.cfg.Pubend.ID, 0)
	base = base[:len(base)-1]
	var kvs []kv
	for _, t := range []byte{tableState, tableMember} {
		pre := prefix(r.cfg.Pubend.ID, t)
		if err := r.store.Scan(pre, prefixEnd(pre), func(k, v []byte) bool {
			kvs = append(kvs, kv{k: bytes.Clone(k[len(base):]), v: bytes.Clone(v)})
			return true
		}); err != nil {
			return nil, fmt.Errorf("replica %s: snapshot: %w", r.cfg.Name, err)
		}
	}
	idx, term := r.applied.index, r.applied.term
	return &pb.Snapshot{Data: encodeSnapshot(kvs),
		Metadata: &pb.SnapshotMetadata{Index: &idx, Term: &term, ConfState: proto.CloneOf(r.applied.conf)}}, nil
}

// restore replaces the state, the members and the log by a snapshot.
func (r *Replica) restore(s *pb.Snapshot, b *durable.Batch) error {
	kvs, err := decodeSnapshot(s.GetData())
	if err != nil {
		return err
	}
	p := r.cfg.Pubend.ID
	base := prefix(p, 0)
	base = base[:len(base)-1]
	for _, t := range []byte{tableState, tableMember} {
		pre := prefix(p, t)
		b.DeleteRange(pre, prefixEnd(pre))
	}
	clear(r.members)
	r.roster = roster{names: slices.Clone(r.cfg.Replicas), replaces: map[string]string{}}
	for _, x := range kvs {
		if len(x.k) == 0 || (x.k[0] != tableState && x.k[0] != tableMember) {
			return fmt.Errorf("snapshot: key %x outside the state", x.k)
		}
		k := append(bytes.Clone(base), x.k...)
		b.Set(k, x.v)
		if x.k[0] == tableState && string(x.k[1:]) == string(rosterKey) {
			if r.roster, err = decodeRoster(x.v); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
		}
		if x.k[0] == tableMember && len(x.k) == 9 {
			id := beUint64(x.k[1:])
			r.members[id], r.peers[id] = string(x.v), string(x.v)
		}
	}
	meta := s.GetMetadata()
	r.log.restore(meta, b)
	r.applied = point{index: meta.GetIndex(), term: meta.GetTerm(), conf: proto.CloneOf(meta.GetConfState())}
	r.log.conf = r.applied.conf
	b.Set(prefix(p, tableApplied), r.applied.encode())
	r.Stats.Snapshots++
	return nil
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b[:8] {
		v = v<<8 | uint64(c)
	}
	return v
}
