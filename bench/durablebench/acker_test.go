package durablebench

import (
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/client"
)

// TestAcker: events are acknowledged every Every and at the next idle
// tick; silences alone at most once a silenceAckPeriod.
func TestAcker(t *testing.T) {
	var a acker
	t0 := time.Now()
	a.lastAck = t0
	first, second, third := a.consumed(client.DurableEvent, 3), a.consumed(client.DurableEvent, 3), a.consumed(client.DurableEvent, 3)
	if first || second || !third {
		t.Fatal("third event not acknowledged")
	}
	if a.due(t0.Add(time.Millisecond)) {
		t.Fatal("idle tick with nothing new acknowledged")
	}
	a.consumed(client.DurableEvent, 3)
	if !a.due(t0.Add(2 * time.Millisecond)) {
		t.Fatal("idle tick left an event unacknowledged")
	}
	a.consumed(client.DurableSilence, 3)
	if a.due(t0.Add(10 * time.Millisecond)) {
		t.Fatal("silence acknowledged within the period")
	}
	if !a.due(t0.Add(2*time.Millisecond + silenceAckPeriod)) {
		t.Fatal("silence never acknowledged")
	}
}
