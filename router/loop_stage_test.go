package router

import (
	"fmt"
	"github.com/sift-pubsub/sift/router/core"
	"slices"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// stageLoop is a matching loop with two client connections (no QUIC:
// nothing here closes a connection) and one subscription each on every
// event carrying x.
func stageLoop(t *testing.T) (*matchLoop, []*conn) {
	t.Helper()
	l := &matchLoop{
		eng:     core.NewEngine(match.NewFast(match.FastConfig{}), 0),
		conns:   map[ifaceID]*conn{},
		metrics: NewMetrics(nil),
	}
	var cs []*conn
	for id := range ifaceID(2) {
		id++
		c := &conn{id: id, q: newSendQueue(16, 1<<20)}
		if err := l.eng.Attach(id, core.KindClient); err != nil {
			t.Fatal(err)
		}
		if err := l.eng.Subscribe(id, 7, "x exists"); err != nil {
			t.Fatal(err)
		}
		l.conns[id] = c
		cs = append(cs, c)
	}
	return l, cs
}

// xEvent returns the event {x: i} and its wire encoding.
func xEvent(i int) (match.Event, []byte) {
	ev := match.MustEvent(match.Attr{Name: "x", Value: match.Int(int64(i))})
	return ev, wire.AppendEvent(nil, ev)
}

// routeBatch routes n events {x: from...} as one step would, and flushes
// at the end of the step.
func routeBatch(l *matchLoop, from, n int) {
	for i := range n {
		ev, raw := xEvent(from + i)
		for _, h := range l.eng.Route(0, ev) {
			if c, ok := l.conns[h.Iface]; ok {
				l.deliver(c, h.Subs, raw, time.Time{})
			}
		}
	}
	l.flush()
}

// queued takes the deliveries queued for c and returns their events' x.
func queued(t *testing.T, c *conn) []string {
	t.Helper()
	var out []string
	for _, it := range queuedItems(t, c) {
		x, _ := it.Event.Get("x")
		out = append(out, x.String())
	}
	return out
}

// TestStagedDeliveriesKeepOrder: deliveries staged over batches reach each
// connection's queue in routing order, all of them, whether a share is
// queued at the end of its step or early (stageMax).
func TestStagedDeliveriesKeepOrder(t *testing.T) {
	l, cs := stageLoop(t)
	var want []string
	for i := range 3*stageMax + 5 {
		want = append(want, fmt.Sprint(i))
	}
	routeBatch(l, 0, 3)
	routeBatch(l, 3, 3*stageMax+2) // queued early, three times over, then at the end
	for _, c := range cs {
		if got := queued(t, c); !slices.Equal(got, want) {
			t.Fatalf("conn %d: %d deliveries %v..., want %d in order", c.id, len(got), got[:min(len(got), 5)], len(want))
		}
		if c.q.open != nil {
			t.Fatalf("conn %d: %d deliveries left staged", c.id, c.q.open.len())
		}
	}
	if len(l.staged) != 0 {
		t.Fatalf("%d connections left in the staged list", len(l.staged))
	}
	// Mid-step, a share is queued as soon as it reaches stageMax.
	for i := range stageMax + 1 {
		_, raw := xEvent(i)
		l.deliver(cs[0], []uint64{7}, raw, time.Time{})
	}
	if _, n := cs[0].q.pending(); n != stageMax || cs[0].q.open.len() != 1 {
		t.Fatalf("mid-step: %d queued and %d staged, want %d and 1", n, cs[0].q.open.len(), stageMax)
	}
	l.flush()
	if _, n := cs[0].q.pending(); n != stageMax+1 {
		t.Fatalf("after the step: %d queued, want %d", n, stageMax+1)
	}
}

// TestStagedDeliveriesSkipDetached: a connection detached during a step
// gets none of the deliveries staged for it; the others get theirs.
func TestStagedDeliveriesSkipDetached(t *testing.T) {
	l, cs := stageLoop(t)
	ev, raw := xEvent(1)
	for _, h := range l.eng.Route(0, ev) {
		l.deliver(l.conns[h.Iface], h.Subs, raw, time.Time{})
	}
	l.eng.Detach(cs[0].id)
	delete(l.conns, cs[0].id)
	l.flush()
	if got := queued(t, cs[0]); len(got) != 0 {
		t.Fatalf("detached connection got %v", got)
	}
	if got := queued(t, cs[1]); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("other connection got %v, want [1]", got)
	}
}
