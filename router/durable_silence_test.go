package router

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// silenceRig is a driver with one client connection (client/7) whose
// control lane nobody reads until the test drains it.
type silenceRig struct {
	d  *durableNode
	cl *durableClient
}

func newSilenceRig() *silenceRig {
	d := &durableNode{name: "r", log: slog.New(slog.DiscardHandler), met: newDurableMetrics(prometheus.NewRegistry()),
		clients: map[ifaceID]*durableClient{}, clientOut: map[ifaceID]*clientBatch{}}
	d.view.init()
	cl := &durableClient{c: &conn{id: 7, q: newSendQueue(4*maxSilenceBacklog, 16)}, sessions: map[string]uint64{}}
	d.clients[7] = cl
	return &silenceRig{d: d, cl: cl}
}

// backUp fills the lane with maxSilenceBacklog entries of other traffic.
func (g *silenceRig) backUp() {
	for range maxSilenceBacklog {
		g.cl.c.q.pushControl([]byte{})
	}
}

// drain empties the lane and returns the durable messages it held.
func (g *silenceRig) drain(t *testing.T) []durable.Msg {
	t.Helper()
	var stream bytes.Buffer
	for _, e := range g.cl.c.q.takeControl(nil) {
		stream.Write(e)
	}
	var out []durable.Msg
	fr := wire.NewFrameReader(&stream, 1<<20)
	for {
		m, err := fr.ReadMessage()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.(*wire.Durable).Msg)
	}
}

func (g *silenceRig) send(ms ...durable.Msg) {
	var envs []durable.Envelope
	for _, m := range ms {
		envs = append(envs, durable.Envelope{From: "r/shb", To: "client/7", Msg: m})
	}
	g.d.send(envs, nil)
}

func silence(sub, p string, t durable.Tick) durable.Msg {
	return durable.Msg{Kind: durable.MsgSubSilence, Sub: sub, Session: 1, Pubend: p, Tick: t}
}

// TestDurableSilenceHeldForBackedUpLane: a silence the SHB sent to a
// client whose control lane is backed up is held, not dropped: once the
// lane drains it goes out (the newest per subscription and pubend: the
// SHB recorded it as sent, so the subscriber's CT reaches what the SHB
// believes it conveyed), and a later message to the same subscription
// and pubend replaces it. Fails when the silence is skipped: the lane
// never carries it.
func TestDurableSilenceHeldForBackedUpLane(t *testing.T) {
	g := newSilenceRig()
	lane := func() int { n, _ := g.cl.c.q.pending(); return n }
	g.backUp()
	g.send(silence("s1", "p", 10), silence("s1", "q", 11), silence("s2", "p", 12))
	g.send(silence("s1", "p", 20)) // replaces s1's on p
	if lane() != maxSilenceBacklog {
		t.Fatalf("the backed-up lane holds %d entries, want its %d: a silence was queued behind them", lane(), maxSilenceBacklog)
	}
	// s2 is sent an event above its held silence: the event conveys more.
	g.send(durable.Msg{Kind: durable.MsgEvent, Sub: "s2", Session: 1, Pubend: "p", Tick: 13})
	if got := g.drain(t); len(got) != 1 || got[0].Kind != durable.MsgEvent {
		t.Fatalf("after an event to s2: lane %v, want the event alone", got)
	}
	g.send() // the next send, the lane drained: what is held goes out
	checkLane(t, g.drain(t), silence("s1", "p", 20), silence("s1", "q", 11))
	g.send()
	checkLane(t, g.drain(t))
	// A start replaces every silence held for its subscription.
	g.backUp()
	g.send(silence("s1", "p", 30), silence("s1", "q", 31), silence("s3", "p", 32))
	g.send(durable.Msg{Kind: durable.MsgStart, Sub: "s1", Session: 2, CT: durable.CT{"p": 30, "q": 31}})
	if got := g.drain(t); len(got) != 1 || got[0].Kind != durable.MsgStart {
		t.Fatalf("after s1's start: lane %v, want the start alone", got)
	}
	g.send()
	checkLane(t, g.drain(t), silence("s3", "p", 32))
	// A client gone takes its held silences with it.
	g.backUp()
	g.send(silence("s3", "p", 40))
	delete(g.d.clients, 7)
	g.send()
	if len(g.d.heldSilences) != 0 {
		t.Fatalf("%d silences held for a client gone", len(g.d.heldSilences))
	}
}

// checkLane fails unless got is the silences want, in order.
func checkLane(t *testing.T, got []durable.Msg, want ...durable.Msg) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = got[i].Kind == want[i].Kind && got[i].Sub == want[i].Sub && got[i].Pubend == want[i].Pubend && got[i].Tick == want[i].Tick
	}
	if !ok {
		t.Fatalf("lane %v, want %v", got, want)
	}
}
