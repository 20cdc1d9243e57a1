package router

import (
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sift-pubsub/sift/internal/wire"
)

// TestReplicaFrameNeverGoesBack: a replica frame for router c reaches a
// (links to h, whose reach says c is behind it, and to x) from h, which
// sent it on for want of a link to c: a drops it instead of sending it
// back to h, where the two would pass it back and forth. The same frame
// from x goes to h; one for a router no link reaches floods every link
// but the one it came from.
func TestReplicaFrameNeverGoesBack(t *testing.T) {
	d := &durableNode{name: "a", log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
		outboxes: map[string]*outbox{}, links: map[string]*durableLink{
			"h": {peer: "h", c: &conn{q: newSendQueue(8, 16)}, reach: []string{"h", "b", "c"}},
			"x": {peer: "x", c: &conn{q: newSendQueue(8, 16)}, reach: []string{"x"}},
		}}
	queued := func() map[string]int {
		out := map[string]int{}
		for peer, ob := range d.outboxes {
			out[peer] = ob.frames
		}
		clear(d.outboxes)
		return out
	}
	for _, tc := range []struct {
		to, from string
		want     map[string]int
	}{
		{"c", "h", map[string]int{}},
		{"c", "x", map[string]int{"h": 1}},
		{"c", "", map[string]int{"h": 1}},
		{"z", "h", map[string]int{"x": 1}},
		{"z", "x", map[string]int{"h": 1}},
	} {
		d.toReplica(&wire.Replica{From: "b", To: tc.to, Data: []byte{1}}, tc.from)
		got := queued()
		if len(got) != len(tc.want) {
			t.Errorf("frame for %s from %q: queued %v, want %v", tc.to, tc.from, got, tc.want)
			continue
		}
		for peer, n := range tc.want {
			if got[peer] != n {
				t.Errorf("frame for %s from %q: queued %v, want %v", tc.to, tc.from, got, tc.want)
			}
		}
	}
}
