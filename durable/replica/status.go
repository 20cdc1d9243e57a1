package replica

import (
	"fmt"

	"go.etcd.io/raft/v3"
)

// Progress returns, while this replica is raft's leader, its view of
// every other replica's log by name (raft's progress: state, match,
// next, paused, inactive), for status pages and failing tests; nil when
// it does not lead.
func (r *Replica) Progress() map[string]string {
	st := r.rn.Status()
	if st.RaftState != raft.StateLeader {
		return nil
	}
	out := map[string]string{}
	for id, pr := range st.Progress {
		if id == r.id {
			continue
		}
		name := r.peers[id]
		if _, dup := out[name]; name == "" || dup {
			name = fmt.Sprintf("%s id %x", name, id) // an old id of a wiped replica
		}
		out[name] = pr.String()
	}
	return out
}
