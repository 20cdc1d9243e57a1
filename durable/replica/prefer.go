package replica

import (
	"slices"

	"go.etcd.io/raft/v3/tracker"
)

// A replicated pubend may name a preferred replica (Config.Preferred):
// the one whose router its publishers and SHBs are nearest to. While
// another replica leads, every hop from the leader toward them (the
// pubend's knowledge, its answers, the raft messages relayed for the
// other followers) crosses one more router, which spends its CPU on
// them. So a leader that is not the preferred replica hands leadership to
// it (raft's leadership transfer, as a leader leaving the voters does,
// learner.go) once the preferred replica is a voter that the leader heard
// from lately, replicates to steadily and holds every committed entry. It
// happens after the first election of a new group, whichever replica won
// it, and after the preferred replica comes back from a failure. The
// transfer is a leader change like any other (the publishers are refused
// as not leading and follow the named leader); one that raft gives up
// (the preferred replica did not take over within an election timeout)
// is tried again only a quorum period later, so a replica that cannot
// lead does not keep the pubend changing hands.

// preferLeader, at the leader once per raft tick, hands leadership to the
// preferred replica when it is ready to take it.
func (r *Replica) preferLeader() {
	if r.lead.preferWait > 0 {
		r.lead.preferWait--
		return
	}
	to := r.preferredID()
	if to == 0 || to == r.id || r.lead.pubend == nil || !r.changeIdle() || r.promotionDue() || !r.readyToLead(to) {
		return
	}
	if r.transferTo(to) {
		r.Stats.Preferred++
		r.lead.preferWait = r.cfg.QuorumTicks
	}
}

// preferredID returns the raft id of the preferred replica when it is in
// the roster and has exactly one voter id (not while a wiped preferred
// replica's old and new ids are both in the configuration), else 0.
func (r *Replica) preferredID() uint64 {
	if r.cfg.Preferred == "" || !slices.Contains(r.roster.names, r.cfg.Preferred) {
		return 0
	}
	ids := r.voterIDs(r.cfg.Preferred)
	if len(ids) != 1 {
		return 0
	}
	return ids[0]
}

// readyToLead reports whether the leader heard from id lately, replicates
// to it steadily and id holds every committed entry: it would win the
// transfer's election at once and lose nothing the group acknowledged.
func (r *Replica) readyToLead(id uint64) bool {
	st := r.rn.Status()
	pr, ok := st.Progress[id]
	return ok && !pr.IsLearner && pr.State == tracker.StateReplicate && r.active(id) && pr.Match >= st.GetCommit()
}
