package replica

import (
	"maps"
	"slices"

	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// A replica joins in two stages. A replica of the roster that asks to
// join under an id raft does not know first becomes a learner: raft
// sends it the log (or a snapshot) like a follower's, but it does not
// vote, so a majority is never made to wait for a replica that holds
// nothing yet, and a wiped replica's slow catch-up does not cost the
// group a voter. Once its log is within Config.CatchUpEntries of the
// leader's commit, one joint-consensus change promotes it to voter and
// removes the ids it takes the place of (its own old id after a wipe,
// the replaced replica's). The learner keeps asking to join while it
// waits; each request is the leader's cue to check its progress.
//
// The leader itself may be removed or replaced. It does not remove its
// own id: it hands leadership to the most caught-up other voter (raft's
// leadership transfer, MsgTimeoutNow: the transferee campaigns at once),
// and the new leader finishes the change, since every leader reconciles
// the voters with the roster (reconcile). A removed replica that never
// heard of its removal (the leader stops sending to it) may still stand
// for election and, its log as long as the others', win: raft lets a
// leader outside its configuration commit, and this one hands
// leadership to a voter at its first tick.

// join handles a join request from replica name under id: a learner
// first, a voter once caught up. Only the leader acts, once no other
// change is under way.
func (r *Replica) join(name string, id uint64) {
	if r.lead.pubend == nil || name == r.cfg.Name || r.isVoter(id) || !r.changeIdle() {
		return
	}
	if !slices.Contains(r.roster.names, name) {
		return
	}
	if !r.isLearner(id) {
		cc := &pb.ConfChangeV2{Context: encodeMember(id, name), Transition: pb.ConfChangeTransitionJointImplicit.Enum(),
			Changes: []*pb.ConfChangeSingle{{Type: pb.ConfChangeAddLearnerNode.Enum(), NodeId: &id}}}
		if r.rn.ProposeConfChange(cc) == nil {
			r.lead.confWait = true
			r.Stats.Learners++
		}
		return
	}
	if !r.caughtUp(id) {
		return
	}
	olds := r.voterIDs(name)
	if replaced, ok := r.roster.replaces[name]; ok {
		olds = append(olds, r.voterIDs(replaced)...)
	}
	if !r.activeMajority(slices.Concat(r.votersWithout(olds), []uint64{id})) {
		return // it would leave the voters without a working majority: wait
	}
	if slices.Contains(olds, r.id) {
		r.transferAway(olds) // the new leader promotes it
		return
	}
	cc := &pb.ConfChangeV2{Context: encodeMember(id, name), Transition: pb.ConfChangeTransitionJointImplicit.Enum()}
	for _, old := range olds {
		cc.Changes = append(cc.Changes, &pb.ConfChangeSingle{Type: pb.ConfChangeRemoveNode.Enum(), NodeId: &old})
	}
	cc.Changes = append(cc.Changes, &pb.ConfChangeSingle{Type: pb.ConfChangeAddNode.Enum(), NodeId: &id})
	if r.rn.ProposeConfChange(cc) == nil {
		r.lead.confWait = true
		r.Stats.Joins++
	}
}

// changeIdle reports whether no membership change is under way: none
// proposed and not applied, no joint configuration left to leave. Raft
// must have heard of every apply too: it turns a change proposed while
// it still counts the previous one pending into an empty entry, without
// an error, and the change would then wait for ever (confWait).
func (r *Replica) changeIdle() bool {
	return !r.lead.confWait && !r.lead.rosterWait && len(r.applied.conf.GetVotersOutgoing()) == 0 &&
		r.rn.BasicStatus().Applied >= r.applied.index
}

// isLearner reports whether id is a learner, as applied here.
func (r *Replica) isLearner(id uint64) bool {
	return slices.Contains(r.applied.conf.GetLearners(), id) || slices.Contains(r.applied.conf.GetLearnersNext(), id)
}

// caughtUp reports whether the leader replicates to id steadily and id's
// log is within CatchUpEntries of the leader's commit.
func (r *Replica) caughtUp(id uint64) bool {
	st := r.rn.Status()
	pr, ok := st.Progress[id]
	return ok && pr.State == tracker.StateReplicate && pr.Match+r.cfg.CatchUpEntries >= st.GetCommit()
}

// reconcile, at the leader once per raft tick, removes the ids of
// replicas whose names left the roster, one change at a time, once no
// learner of the roster waits to be promoted and the voters left would
// have an active majority. A name that a roster
// entry still waits to be replaced by keeps its ids until its
// replacement is promoted (join). When the leader's own id is to go, it
// transfers leadership instead and the next leader removes it.
func (r *Replica) reconcile() {
	if r.lead.pubend == nil || !r.changeIdle() || r.promotionDue() {
		return
	}
	pending := map[string]bool{}
	for _, old := range r.roster.replaces {
		if slices.Contains(r.roster.names, old) {
			continue
		}
		pending[old] = true
	}
	var gone []uint64
	for _, id := range slices.Sorted(maps.Keys(r.members)) {
		name := r.members[id]
		if slices.Contains(r.roster.names, name) || pending[name] {
			continue
		}
		if r.isVoter(id) || r.isLearner(id) {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 || !r.activeMajority(r.votersWithout(gone)) {
		return
	}
	if slices.Contains(gone, r.id) {
		r.transferAway(gone)
		return
	}
	cc := &pb.ConfChangeV2{Transition: pb.ConfChangeTransitionJointImplicit.Enum()}
	for _, id := range gone {
		cc.Changes = append(cc.Changes, &pb.ConfChangeSingle{Type: pb.ConfChangeRemoveNode.Enum(), NodeId: &id})
	}
	if r.rn.ProposeConfChange(cc) == nil {
		r.lead.confWait = true
	}
}

// promotionDue reports whether a replica of the roster is to become a
// voter: a name with no voter id yet (added, or replacing another, and
// not yet promoted), or a learner (a wiped replica's new id). Removals
// wait for it, so that the group gains a voter before it loses one (with
// three voters, removing one first and then losing another's disk would
// leave no majority). A replica that never joins or never catches up
// holds removals back until an operator removes it.
func (r *Replica) promotionDue() bool {
	for _, id := range slices.Concat(r.applied.conf.GetLearners(), r.applied.conf.GetLearnersNext()) {
		if slices.Contains(r.roster.names, r.members[id]) {
			return true
		}
	}
	for _, name := range r.roster.names {
		if len(r.voterIDs(name)) == 0 {
			return true
		}
	}
	return false
}

// votersWithout returns the voters (as applied) but the ids given.
func (r *Replica) votersWithout(ids []uint64) []uint64 {
	return slices.DeleteFunc(slices.Clone(r.applied.conf.GetVoters()), func(v uint64) bool { return slices.Contains(ids, v) })
}

// activeMajority reports whether a majority of voters is active: a
// change to those voters must not leave the group unable to commit (the
// old id of a wiped replica, a replica down, would each be needed). A
// removal waits until it is safe: after a wipe, the wiped replica's
// promotion (which removes its old id) goes first.
func (r *Replica) activeMajority(voters []uint64) bool {
	n := 0
	for _, v := range voters {
		if r.active(v) {
			n++
		}
	}
	return n > len(voters)/2
}

// active reports whether the leader heard from id in this quorum period
// or the previous one (quorum.go), or id is its own.
func (r *Replica) active(id uint64) bool {
	return id == r.id || r.lead.heard[id] || r.lead.heardLast[id]
}

// transferAway hands leadership to the voter, not among leaving, whose
// log is the longest (raft sends it MsgTimeoutNow once it holds the
// leader's whole log). The replica stops being the PHB at once, so its
// router refuses publishers as not leading; if raft gives the transfer
// up (an election timeout without it), the replica fences again and
// serves.
func (r *Replica) transferAway(leaving []uint64) {
	st := r.rn.Status()
	if st.LeadTransferee != 0 {
		return
	}
	var to, best uint64
	for _, id := range r.applied.conf.GetVoters() {
		pr, ok := st.Progress[id]
		if id == r.id || slices.Contains(leaving, id) || !ok || pr.State != tracker.StateReplicate || !r.active(id) {
			continue
		}
		if to == 0 || pr.Match > best {
			to, best = id, pr.Match
		}
	}
	if to == 0 {
		return // no voter to hand over to yet; tried again at the next tick
	}
	if r.transferTo(to) {
		r.Stats.Transfers++
	}
}

// transferTo asks raft to hand leadership to voter to, and reports
// whether raft took the request. The replica stops being the PHB at once;
// if raft gives the transfer up, it fences again and serves in the same
// term (checkLeadership).
func (r *Replica) transferTo(to uint64) bool {
	r.rn.TransferLeader(to)
	if r.rn.BasicStatus().LeadTransferee != to {
		return false
	}
	r.Stats.Activations++
	term := r.lead.term
	r.stopLeading()
	r.lead = leader{term: term, activation: term<<16 | uint64(r.Stats.Activations&0xffff), heard: map[uint64]bool{}, transfer: to}
	return true
}
