package client

import (
	"errors"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/replica"
)

// TestDialerFollowsNamedLeader: after a not-leader refusal naming a
// router whose address the dialer learned, that address is tried next;
// a refusal naming no leader, an unknown one, a leader named only in the
// reason's text, or another error leaves the turn as it was.
func TestDialerFollowsNamedLeader(t *testing.T) {
	d := newDialer(DurableOptions{Routers: []string{"h1:1", "h2:2", "h3:3"}})
	d.addrOf["a"], d.addrOf["c"] = "h1:1", "h3:3"
	for _, tc := range []struct {
		err  error
		want int
	}{
		{notLeader("c"), 2},
		{notLeader("a"), 0},
		{notLeader(""), 1},
		{notLeader("z"), 1},
		{&RefusedError{Router: "b", Reason: replica.NotLeaderReason("p", "b", "c")}, 1},
		{&RefusedError{Router: "b", Reason: "store full", Leader: "c"}, 1},
		{errors.New("dial h2:2: timeout"), 1},
	} {
		d.next = 1
		d.follow(tc.err)
		if d.next != tc.want {
			t.Errorf("after %v: next %d, want %d", tc.err, d.next, tc.want)
		}
	}
}

// notLeader is router b's not-leader refusal naming leader.
func notLeader(leader string) error {
	return refusedBy("b", durable.Msg{Kind: durable.MsgRefused, Pubend: "p", Reason: replica.NotLeaderReason("p", "b", leader),
		NotLeader: true, Leader: leader})
}
