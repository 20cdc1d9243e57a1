package replica

import pb "go.etcd.io/raft/v3/raftpb"

// A leader cut off from the other replicas cannot commit, so it
// acknowledges nothing; but while it believes it leads, its router claims
// the pubend and publishers connected to it wait. Raft's own CheckQuorum
// cannot be used: its followers must tick raft, whose election timer is
// randomized with crypto/rand (see the package doc). The replica checks
// instead, as CheckQuorum does: every QuorumTicks raft ticks of
// leadership (three election timeouts by default: CheckQuorum's one
// stepped leaders down under load, their followers slow to answer), the
// voters heard from in the leader's term since the last check, with the
// leader itself, must be a majority of the configuration
// (of both, during a joint change). If not, the replica stops being the
// PHB (its router stops claiming the pubend and refuses its publishers)
// and proposes a new fence: the pubend runs again only once that fence is
// committed, that is once a majority answers again. Meanwhile the others
// elect a leader of their own, and the cut-off one steps down in raft
// when it hears the higher term.

// checkQuorum runs the check once per QuorumTicks of leadership.
func (r *Replica) checkQuorum() {
	if r.lead.term == 0 {
		return
	}
	if r.lead.quorumTicks++; r.lead.quorumTicks < r.cfg.QuorumTicks {
		return
	}
	r.lead.quorumTicks = 0
	heard := r.lead.heard
	r.lead.heard, r.lead.heardLast = map[uint64]bool{}, heard
	if quorumActive(r.applied.conf, r.id, heard) || r.lead.pubend == nil && !r.lead.fenceApplied {
		return
	}
	r.Stats.QuorumLost++
	r.Stats.Activations++
	term := r.lead.term
	r.stopLeading()
	r.lead = leader{term: term, activation: term<<16 | uint64(r.Stats.Activations&0xffff), heard: map[uint64]bool{}}
	r.proposeFence()
}

// quorumActive reports whether self and the voters heard from are a
// majority of each voter set of conf.
func quorumActive(conf *pb.ConfState, self uint64, heard map[uint64]bool) bool {
	return majority(conf.GetVoters(), self, heard) && majority(conf.GetVotersOutgoing(), self, heard)
}

func majority(voters []uint64, self uint64, heard map[uint64]bool) bool {
	if len(voters) == 0 {
		return true
	}
	n := 0
	for _, v := range voters {
		if v == self || heard[v] {
			n++
		}
	}
	return n > len(voters)/2
}
