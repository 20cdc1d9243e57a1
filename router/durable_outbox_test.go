package router

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// TestDurableOutboxBackpressure: a link lane of 2 entries, 1,000 durable
// messages queued for it: nothing is dropped, each flush fills the lane
// with entries of several frames, and draining the lane and flushing in
// turn delivers every message once, in order, whole.
func TestDurableOutboxBackpressure(t *testing.T) {
	d := &durableNode{log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
		outboxes: map[string]*outbox{}}
	l := &durableLink{peer: "b", c: &conn{q: newSendQueue(2, 16)}}
	const n = 1000
	for i := range n {
		d.queueLink(l, durable.Msg{Kind: durable.MsgSilence, Pubend: "p", From: durable.Tick(2*i + 1), To: durable.Tick(2*i + 2)})
	}
	var stream bytes.Buffer
	entries := 0
	for round := 0; d.outboxFrames() > 0; round++ {
		if round > n {
			t.Fatalf("the outbox does not drain: %d frames left", d.outboxFrames())
		}
		d.flushLinks()
		if ctrl, _ := l.c.q.pending(); ctrl > 2 {
			t.Fatalf("lane holds %d entries, more than its 2", ctrl)
		}
		for _, e := range l.c.q.takeControl(nil) {
			stream.Write(e)
			entries++
		}
	}
	if dropped := metricCount(d.met.linkDropped); dropped != 0 {
		t.Fatalf("%v messages dropped", dropped)
	}
	fr := wire.NewFrameReader(&stream, 1<<20)
	for i := range n {
		m, err := fr.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got := m.(*wire.Durable).Msg
		if got.From != durable.Tick(2*i+1) || got.To != durable.Tick(2*i+2) {
			t.Fatalf("message %d: %v out of order", i, got)
		}
	}
	if entries >= n/10 {
		t.Fatalf("%d lane entries for %d messages: frames are not packed", entries, n)
	}
	t.Logf("%d messages in %d lane entries", n, entries)
}

// TestDurableLowSpace: below MinFree free bytes the driver refuses
// durable publishes (a refusal that acknowledges nothing, counted), and
// takes them again once space is back.
func TestDurableLowSpace(t *testing.T) {
	free := uint64(1 << 20)
	d := &durableNode{log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
		host: durable.NewHost(), storeDir: "/data/durable", minFree: 64 << 20, freeSpace: func(string) (uint64, error) { return free, nil }}
	d.checkSpace()
	why := d.storeFull()
	if why == "" {
		t.Fatal("1 MiB free, 64 MiB to keep: publishes not refused")
	}
	out := d.refusePublish(durable.Envelope{From: "client/7", To: "local/pubend/a",
		Msg: durable.Msg{Kind: durable.MsgPublish, Publisher: "p", Seq: 9}}, why)
	if len(out) != 1 || out[0].To != "client/7" || out[0].Msg.Kind != durable.MsgPubRefused || out[0].Msg.Seq != 0 || out[0].Msg.Reason != why {
		t.Fatalf("refusal %v: want a pub-refused to the client acknowledging nothing, with the reason", out)
	}
	free = 1 << 30
	d.checkSpace()
	if why := d.storeFull(); why != "" {
		t.Fatalf("1 GiB free: still refused (%s)", why)
	}
}

// TestDurableClientBatches: the messages one send carries to a client go
// as lane entries of up to maxClientEntry frames, in order, whole.
func TestDurableClientBatches(t *testing.T) {
	d := &durableNode{log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
		clients: map[ifaceID]*durableClient{}, clientOut: map[ifaceID]*clientBatch{}}
	d.view.init()
	cl := &durableClient{c: &conn{q: newSendQueue(8, 16)}}
	d.clients[7] = cl
	const n = 200
	var msgs []durable.Envelope
	for i := range n {
		msgs = append(msgs, durable.Envelope{From: "local/shb", To: "client/7",
			Msg: durable.Msg{Kind: durable.MsgSubSilence, Pubend: "p", Tick: durable.Tick(i + 1)}})
	}
	d.send(msgs, nil)
	entries := cl.c.q.takeControl(nil)
	if want := (n + maxClientEntry - 1) / maxClientEntry; len(entries) != want {
		t.Fatalf("%d lane entries for %d messages, want %d", len(entries), n, want)
	}
	fr := wire.NewFrameReader(bytes.NewReader(bytes.Join(entries, nil)), 1<<20)
	for i := range n {
		m, err := fr.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if got := m.(*wire.Durable).Msg.Tick; got != durable.Tick(i+1) {
			t.Fatalf("message %d: tick %d", i, got)
		}
	}
}

// TestDurableHeartbeatsOnlyToIdle: a heartbeat round skips a client the
// driver sent something since the previous round (it heard from the
// router anyway), even when its lane is empty again, and beats one that
// was sent nothing; the busy client is
// beaten again in the first round after it went quiet.
func TestDurableHeartbeatsOnlyToIdle(t *testing.T) {
	d := &durableNode{log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
		clients: map[ifaceID]*durableClient{}, clientOut: map[ifaceID]*clientBatch{}}
	d.view.init()
	busy, idle := &durableClient{c: &conn{q: newSendQueue(8, 16)}}, &durableClient{c: &conn{q: newSendQueue(8, 16)}}
	d.clients[1], d.clients[2] = busy, idle
	beats := func(cl *durableClient) (heartbeats, others int) {
		for _, e := range cl.c.q.takeControl(nil) {
			if bytes.Equal(e, heartbeatFrame) {
				heartbeats++
			} else {
				others++
			}
		}
		return heartbeats, others
	}
	for round := range 3 {
		d.send([]durable.Envelope{{From: "local/shb", To: "client/1",
			Msg: durable.Msg{Kind: durable.MsgSubSilence, Pubend: "p", Tick: durable.Tick(round + 1)}}}, nil)
		if hb, other := beats(busy); hb != 0 || other != 1 { // its writer took the silence
			t.Fatalf("round %d: the client sent a silence got %d heartbeats and %d other entries, want 0 and 1", round, hb, other)
		}
		d.beatClients()
		if hb, other := beats(busy); hb != 0 || other != 0 {
			t.Fatalf("round %d: the client sent a silence since the last round got %d heartbeats, want 0", round, hb)
		}
		if hb, other := beats(idle); hb != 1 || other != 0 {
			t.Fatalf("round %d: the idle client got %d heartbeats and %d other entries, want 1 and 0", round, hb, other)
		}
	}
	d.beatClients()
	if hb, _ := beats(busy); hb != 1 {
		t.Fatalf("a round after the busy client went quiet: %d heartbeats, want 1", hb)
	}
}

// TestDurableDrainStopsAtSync: a drain steps the queued inputs, but none
// once the sync in flight has completed: the messages held for it, and
// the next batch's sync, wait only for the driver to take its result.
func TestDurableDrainStopsAtSync(t *testing.T) {
	const n = 100
	fill := func() *durableNode {
		d := &durableNode{in: make(chan durableInput, n), clients: map[ifaceID]*durableClient{}}
		for i := range n {
			d.in <- durableInput{detach: ifaceID(i + 1)} // clients never seen: nothing to do
		}
		return d
	}
	synced := make(chan syncResult, 1)
	synced <- syncResult{}
	d := fill()
	d.drain(synced)
	if left := len(d.in); left != n {
		t.Fatalf("with its sync completed the drain stepped %d inputs, want 0", n-left)
	}
	d = fill()
	d.drain(make(chan syncResult, 1))
	if stepped := n - len(d.in); stepped < drainClock-1 {
		t.Fatalf("with its sync in flight the drain stepped %d inputs, want at least %d", stepped, drainClock-1)
	}
}

// TestDurableOutboxEntriesProperty: whatever mix of durable messages and
// already encoded frames (replica frames) of whatever sizes is queued,
// with flushes into a small lane in between, the lane receives exactly
// the frames' bytes in order, every entry is whole frames, and an entry
// holds at most maxEntryFrames frames and maxEntryBytes bytes unless it is
// one frame alone. (That entries are packed is
// TestDurableOutboxBackpressure's.)
func TestDurableOutboxEntriesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := &durableNode{log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
			outboxes: map[string]*outbox{}}
		l := &durableLink{peer: "b", c: &conn{q: newSendQueue(rapid.IntRange(1, 4).Draw(t, "lane"), 16)}}
		var want, got bytes.Buffer
		var entries [][]byte
		drain := func() {
			d.flushLinks()
			for _, e := range l.c.q.takeControl(nil) {
				got.Write(e)
				entries = append(entries, bytes.Clone(e))
			}
		}
		ops := rapid.IntRange(1, 600).Draw(t, "ops")
		for i := range ops {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				drain()
			case 1: // an encoded frame, up to twice an entry
				body := make([]byte, 1+rapid.IntRange(0, 2*maxEntryBytes).Draw(t, "size"))
				body[0] = byte(wire.TypeReplica)
				frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
				frame = append(frame, body...)
				want.Write(frame)
				d.queueFrame(l, frame)
			default:
				m := durable.Msg{Kind: durable.MsgSilence, Pubend: "p", From: durable.Tick(i + 1), To: durable.Tick(i + 1)}
				if n := rapid.IntRange(0, 3).Draw(t, "big"); n > 0 {
					m = durable.Msg{Kind: durable.MsgRefused, Sub: "s", Reason: strings.Repeat("x", rapid.IntRange(1, wire.MaxErrorLen).Draw(t, "reason"))}
				}
				want.Write(wire.AppendFrame(nil, &wire.Durable{Msg: m}))
				d.queueLink(l, m)
			}
		}
		for round := 0; d.outboxFrames() > 0; round++ {
			if round > ops {
				t.Fatalf("the outbox does not drain: %d frames left", d.outboxFrames())
			}
			drain()
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("the lane got %d bytes, want %d (or not the same)", got.Len(), want.Len())
		}
		for i, e := range entries {
			n := framesIn(t, e)
			if n > maxEntryFrames || (n > 1 && len(e) > maxEntryBytes) {
				t.Fatalf("entry %d: %d frames in %d bytes", i, n, len(e))
			}
		}
	})
}

// framesIn counts the whole frames of a lane entry, failing on a cut one.
func framesIn(t *rapid.T, e []byte) int {
	n := 0
	for len(e) > 0 {
		var err error
		if _, _, e, err = wire.SplitFrame(e, wire.HardMaxFrame); err != nil {
			t.Fatalf("entry cut mid-frame: %v", err)
		}
		n++
	}
	return n
}
