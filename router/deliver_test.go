package router

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// queuedItems takes the Deliver frames queued for client connection c,
// decodes them as a client would and returns their items in order.
func queuedItems(t *testing.T, c *conn) []wire.DeliverItem {
	t.Helper()
	var dec wire.EventDecoder
	var out []wire.DeliverItem
	for _, f := range c.q.takeFrames(nil) {
		frame := f.batch.Frame()
		if got := int(binary.BigEndian.Uint32(frame)) + wire.HeaderLen; got != len(frame) {
			t.Fatalf("frame of %d bytes says %d", len(frame), got)
		}
		if wire.Type(frame[wire.HeaderLen]) != wire.TypeDeliver {
			t.Fatalf("frame type %d, want Deliver", frame[wire.HeaderLen])
		}
		m, err := dec.Decode(wire.TypeDeliver, frame[wire.HeaderLen+1:])
		if err != nil {
			t.Fatalf("queued frame does not decode: %v", err)
		}
		out = append(out, m.(*wire.Deliver).Items...)
		putDeliverFrame(f)
	}
	return out
}

// wantItem is a Deliver item the reference expects: ids and event.
type wantItem struct {
	subs []uint64
	ev   match.Event
}

// TestDeliverFramesAgreeWithReference: whatever the steps route to client
// connections (items split at wire.MaxSubsPerItem ids, events of every
// size, small and large frame limits, a writer that takes the queued
// frames after some steps only, so that the loop goes on filling the last
// one), the Deliver frames the loop queues decode to exactly the
// deliveries, in order, per connection, and no frame of several items
// exceeds the connection's maximum frame.
func TestDeliverFramesAgreeWithReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := range 20 {
		l, cs := stageLoop(t)
		maxFrame := []int{512, 4096, wire.DefaultMaxFrame}[round%3]
		for _, c := range cs {
			c.q.setMaxFrame(maxFrame)
		}
		want := map[ifaceID][]wantItem{}
		got := map[ifaceID][]wire.DeliverItem{}
		for range 1 + rng.IntN(8) {
			for range rng.IntN(3 * stageMax) {
				c := cs[rng.IntN(len(cs))]
				ev, raw := randomEvent(rng)
				subs := randomSubs(rng)
				l.deliver(c, subs, raw, time.Time{})
				for len(subs) > 0 {
					n := min(len(subs), wire.MaxSubsPerItem)
					want[c.id] = append(want[c.id], wantItem{subs: subs[:n], ev: ev})
					subs = subs[n:]
				}
			}
			l.flush()
			if rng.IntN(3) == 0 {
				for _, c := range cs {
					checkFrameSizes(t, c, maxFrame)
					got[c.id] = append(got[c.id], queuedItems(t, c)...)
				}
			}
		}
		for _, c := range cs {
			checkFrameSizes(t, c, maxFrame)
			got := append(got[c.id], queuedItems(t, c)...)
			if len(got) != len(want[c.id]) {
				t.Fatalf("round %d (seed %d), conn %d: %d items, want %d", round, seed, c.id, len(got), len(want[c.id]))
			}
			for i, it := range got {
				w := want[c.id][i]
				if !slices.Equal(it.Subs, w.subs) || !it.Event.Equal(w.ev) {
					t.Fatalf("round %d (seed %d), conn %d, item %d: %d ids %v, want %d ids %v", round, seed, c.id, i, len(it.Subs), it.Event, len(w.subs), w.ev)
				}
			}
		}
	}
}

// checkFrameSizes fails if a frame queued for c holds several items and
// exceeds maxFrame.
func checkFrameSizes(t *testing.T, c *conn, maxFrame int) {
	t.Helper()
	c.q.mu.Lock()
	defer c.q.mu.Unlock()
	for _, f := range c.q.frames {
		if n := len(f.batch.Frame()); f.len() > 1 && n > maxFrame {
			t.Fatalf("conn %d: a frame of %d items and %d bytes, over the maximum %d", c.id, f.len(), n, maxFrame)
		}
	}
}

// randomEvent returns an event of a few bytes to a few KB, mostly small.
func randomEvent(rng *rand.Rand) (match.Event, []byte) {
	size := rng.IntN(64)
	if rng.IntN(16) == 0 {
		size = rng.IntN(8 << 10)
	}
	ev := match.MustEvent(
		match.Attr{Name: "pad", Value: match.Str(strings.Repeat("p", size))},
		match.Attr{Name: "x", Value: match.Int(rng.Int64())},
	)
	return ev, wire.AppendEvent(nil, ev)
}

// randomSubs returns 1 to a few hundred ids of every varint length, once
// in a while more than wire.MaxSubsPerItem.
func randomSubs(rng *rand.Rand) []uint64 {
	n := 1 + rng.IntN(300)
	if rng.IntN(4000) == 0 {
		n = wire.MaxSubsPerItem + 1 + rng.IntN(100)
	}
	subs := make([]uint64, n)
	for i := range subs {
		subs[i] = rng.Uint64() >> rng.IntN(64)
	}
	return subs
}

// TestDeliverFrameRuns: a frame keeps one read time per run of items from
// the same publish frame, in order, for the latency histogram.
func TestDeliverFrameRuns(t *testing.T) {
	t1 := time.Now()
	t2 := t1.Add(time.Millisecond)
	f := getDeliverFrame(wire.DefaultMaxFrame)
	_, raw := xEvent(1)
	for _, at := range []time.Time{t1, t1, t2, t1} {
		f.add([]uint64{1}, raw, at)
	}
	want := []readRun{{t1, 2}, {t2, 1}, {t1, 1}}
	if !slices.EqualFunc(f.runs, want, func(a, b readRun) bool { return a.at.Equal(b.at) && a.n == b.n }) {
		t.Fatalf("runs %v, want %v", f.runs, want)
	}
	f.reset()
	if f.len() != 0 || len(f.runs) != 0 {
		t.Fatalf("after reset: %d items, %d runs", f.len(), len(f.runs))
	}
}

// TestReopenTakesBackOnlyAnUntakenSmallTail: the loop goes on filling
// the last queued frame only while the writer has not taken it and it is
// less than half full; its items stay counted once.
func TestReopenTakesBackOnlyAnUntakenSmallTail(t *testing.T) {
	q := newSendQueue(1, 1<<20)
	_, raw := xEvent(1)
	f := q.reopen()
	f.add([]uint64{1}, raw, time.Time{})
	if !q.pushFrame(f) {
		t.Fatal("queue refused")
	}
	if g := q.reopen(); g != f {
		t.Fatal("the untaken small tail was not reopened")
	}
	if _, n := q.pending(); n != 0 {
		t.Fatalf("%d deliveries pending while the loop fills the tail, want 0", n)
	}
	f.add([]uint64{2}, raw, time.Time{})
	q.pushFrame(f)
	if _, n := q.pending(); n != 2 {
		t.Fatalf("%d deliveries pending, want 2", n)
	}
	if taken := q.takeFrames(nil); len(taken) != 1 || taken[0] != f {
		t.Fatalf("took %d frames, want the one", len(taken))
	}
	if g := q.reopen(); g == f || g.len() != 0 {
		t.Fatal("reopened a frame the writer took")
	}
	full := getDeliverFrame(wire.DefaultMaxFrame)
	for full.roomy() {
		full.add([]uint64{1}, raw, time.Time{})
	}
	q.pushFrame(full)
	if g := q.reopen(); g == full {
		t.Fatal("reopened a frame at least half full")
	}
}

// TestPushFrameAllOrNothing: a frame whose items do not all fit under the
// queue's bound (counted in deliveries, with the link lane's) is refused
// whole, and so is any frame once the queue is closed.
func TestPushFrameAllOrNothing(t *testing.T) {
	q := newSendQueue(1, 3)
	_, raw := xEvent(1)
	frame := func(n int) *deliverFrame {
		f := getDeliverFrame(wire.DefaultMaxFrame)
		for range n {
			f.add([]uint64{1}, raw, time.Time{})
		}
		return f
	}
	if !q.pushFrame(frame(2)) {
		t.Fatal("refused 2 deliveries under a bound of 3")
	}
	if q.pushFrame(frame(2)) {
		t.Fatal("took 4 deliveries under a bound of 3")
	}
	if _, n := q.pending(); n != 2 {
		t.Fatalf("%d pending after the refusal, want 2", n)
	}
	q.close()
	if q.pushFrame(frame(1)) {
		t.Fatal("a closed queue took a frame")
	}
}
