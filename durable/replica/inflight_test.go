package replica

import (
	"testing"

	"github.com/sift-pubsub/sift/durable"
)

// takeUnsynced takes a replica's Ready and applies its writes without
// syncing them: the Ready is in flight. It returns the Ready.
func (c *cluster) takeUnsynced(name string) Ready {
	c.t.Helper()
	rd := c.reps[name].Ready()
	if err := c.store[name].Apply(rd.Writes, false); err != nil {
		c.t.Fatal(err)
	}
	return rd
}

// followersAnswer steps msgs at the followers and carries out their
// Readies in full (synced); it returns their answers to the leader.
func (c *cluster) followersAnswer(leader string, msgs []PeerMsg) []PeerMsg {
	c.t.Helper()
	var answers []PeerMsg
	for _, m := range msgs {
		if err := c.reps[m.To].StepPeer(c.now, m.Data); err != nil {
			c.t.Fatal(err)
		}
	}
	for _, name := range c.names {
		if name == leader {
			continue
		}
		rd := c.reps[name].Ready()
		if err := c.store[name].Apply(rd.Writes, true); err != nil {
			c.t.Fatal(err)
		}
		answers = append(append(answers, rd.PeerNow...), rd.Peer...)
		c.reps[name].Advance()
	}
	return answers
}

func ackOf(msgs []durable.Envelope, seq uint64) bool {
	for _, env := range msgs {
		if env.Msg.Kind == durable.MsgPubAck && env.Msg.Seq == seq {
			return true
		}
	}
	return false
}

// TestAckDuringLeaderSync: the followers' answers to an entry reach the
// leader while its next Ready's sync runs. ReadyInFlight applies the entry
// and releases its acknowledgement then, before that sync ends; and a
// crash that keeps those writes but not the append deferred after them
// restarts the leader cleanly (raft asks applied <= commit).
func TestAckDuringLeaderSync(t *testing.T) {
	c := newCluster(t, 3, 3)
	l := c.waitLeader()
	c.run(20_000)
	c.publish("pub", 1)
	rdA := c.takeUnsynced(l)
	c.store[l].Sync()
	answers := c.followersAnswer(l, append(rdA.PeerNow, rdA.Peer...))
	c.reps[l].Advance()
	c.publish("pub", 2)
	rdB := c.takeUnsynced(l) // in flight: its sync runs
	if ackOf(rdB.Msgs, 1) {
		t.Fatal("seq 1 acknowledged before the followers answered")
	}
	for _, m := range answers {
		if m.To == l {
			if err := c.reps[l].StepPeer(c.now, m.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rd := c.reps[l].Ready(); !rd.Empty() {
		t.Fatal("a Ready taken while another is in flight")
	}
	mid := c.reps[l].ReadyInFlight()
	if !ackOf(mid.Msgs, 1) {
		t.Fatalf("seq 1 committed during the sync, not acknowledged by ReadyInFlight (msgs %v)", mid.Msgs)
	}
	if mid.Sync || len(mid.Peer) > 0 {
		t.Fatal("ReadyInFlight asks for a sync")
	}
	if err := c.store[l].Apply(mid.Writes, false); err != nil {
		t.Fatal(err)
	}
	applied := c.reps[l].Status().Applied
	// A crash after B's and the in-flight writes reached the disk, before
	// the append deferred to the next Ready did.
	c.store[l].Sync()
	c.crash(l)
	c.boot(l, false)
	if got := c.reps[l].Status().Applied; got < applied {
		t.Fatalf("restarted at applied %d, below the %d applied before the crash", got, applied)
	}
	// Publishing goes on: seq 2 is acknowledged once, at one tick.
	for range 50 {
		if c.acks()[2] != 0 {
			break
		}
		c.publish("pub", 2)
		c.run(5_000)
	}
	if c.acks()[2] == 0 {
		t.Fatal("seq 2 never acknowledged after the restart")
	}
}
