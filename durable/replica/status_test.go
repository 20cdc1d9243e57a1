package replica

import (
	"fmt"
	"strings"
	"testing"
)

// TestProgressAtLeader: the leader reports raft's progress of each other
// replica by name, caught up (replicating, matched at the leader's last
// index) once publishing settles, and a crashed follower's match stays
// behind while the leader goes on; a follower reports none.
func TestProgressAtLeader(t *testing.T) {
	c := newCluster(t, 3, 7)
	l := c.waitLeader()
	for seq := uint64(1); seq <= 5; seq++ {
		c.publish("pub", seq)
	}
	c.run(20_000)
	last := c.reps[l].Status().GetCommit()
	pr := c.reps[l].Progress()
	if len(pr) != 2 {
		t.Fatalf("leader %s reports %d replicas: %v", l, len(pr), pr)
	}
	var down string
	for _, name := range c.names {
		if name == l {
			continue
		}
		if want := fmt.Sprintf("StateReplicate match=%d next=%d", last, last+1); !strings.HasPrefix(pr[name], want) {
			t.Errorf("progress of %s: %q, want %q...", name, pr[name], want)
		}
		if c.reps[name].Progress() != nil {
			t.Errorf("follower %s reports progress: %v", name, c.reps[name].Progress())
		}
		down = name
	}
	c.crash(down)
	for seq := uint64(6); seq <= 10; seq++ {
		c.publish("pub", seq)
	}
	c.run(20_000)
	if c.leader() != l {
		t.Fatalf("leadership moved to %q with one follower down (seed 7 keeps it at %s)", c.leader(), l)
	}
	if got, bad := c.reps[l].Progress()[down], fmt.Sprintf("match=%d ", c.reps[l].Status().GetCommit()); strings.Contains(got, bad) {
		t.Errorf("crashed follower %s: %q, matched at the leader's commit", down, got)
	}
}
