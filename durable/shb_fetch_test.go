package durable

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// fetchHarness steps an SHB with a tail of one event (so that catch-up
// fetches nearly everything) and records, per tick, how often it was
// nacked upstream and, per subscriber, the ticks delivered.
type fetchHarness struct {
	t      *testing.T
	st     *mapStore
	s      *SHB
	now    Tick
	nacked map[Tick]int
	got    map[string][]Tick
}

func newFetchHarness(t *testing.T) *fetchHarness {
	t.Helper()
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}, TailSize: 1}, st)
	if err != nil {
		t.Fatal(err)
	}
	return &fetchHarness{t: t, st: st, s: s, nacked: map[Tick]int{}, got: map[string][]Tick{}}
}

// handle takes the SHB's Ready after a step or tick that returned err.
func (h *fetchHarness) handle(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
	rd := h.s.Ready()
	if err := h.st.Apply(rd.Writes, rd.Sync); err != nil {
		h.t.Fatal(err)
	}
	for _, env := range rd.Msgs {
		switch env.Msg.Kind {
		case MsgNack:
			for _, r := range env.Msg.Ranges {
				for tk := r.From; tk <= r.To; tk++ {
					h.nacked[tk]++
				}
			}
		case MsgEvent:
			h.got[env.To] = append(h.got[env.To], env.Msg.Tick)
		}
	}
}

// step steps the SHB with m from a node, one microsecond later.
func (h *fetchHarness) step(m Msg, from string) {
	h.t.Helper()
	h.now++
	h.handle(h.s.Step(h.now, Envelope{From: from, To: "shb", Msg: m}))
}

// tick fires the SHB's timer d after the last input.
func (h *fetchHarness) tick(d Tick) {
	h.t.Helper()
	h.now += d
	h.handle(h.s.Tick(h.now))
}

// TestSHBCatchupSharesNacks: 20 subscribers with the same filter come
// back at once to a backlog of 100 ticks (tail of 1, so every event is
// fetched): once all are back, each tick is nacked upstream once, not once per session, and
// one answer per tick completes every session, each getting all 100
// events in order.
func TestSHBCatchupSharesNacks(t *testing.T) {
	const subs, ticks = 20, 100
	h := newFetchHarness(t)
	s, step, nacked, got := h.s, h.step, h.nacked, h.got
	all := match.MustParse(`g >= 0`)
	for i := range subs {
		id := fmt.Sprintf("s%02d", i)
		step(Msg{Kind: MsgResume, Sub: id, Session: 1, Filter: all}, id)
		step(ackInstall(s, id, CT{"p": 0}), "r")
		step(Msg{Kind: MsgDisconnect, Sub: id, Session: 1}, id)
	}
	ev := match.MustEvent(match.Attr{Name: "g", Value: match.Int(1)})
	for tk := Tick(1); tk <= ticks; tk++ {
		step(Msg{Kind: MsgData, Pubend: "p", Tick: tk, Prev: tk - 1, Event: ev}, "r")
	}
	clear(got)
	for i := range subs {
		id := fmt.Sprintf("s%02d", i)
		step(Msg{Kind: MsgResume, Sub: id, Session: 2, Filter: all, HasCT: true, CT: CT{"p": 0}}, id)
	}
	h.tick(s.cfg.NackDelay) // the sessions' first nacks are held until all are back
	for tk := Tick(1); tk <= ticks; tk++ {
		if nacked[tk] != 1 {
			t.Fatalf("tick %d nacked %d times by %d sessions, want once", tk, nacked[tk], subs)
		}
		step(Msg{Kind: MsgData, Pubend: "p", Tick: tk, Prev: tk - 1, Event: ev}, "r")
	}
	for i := range subs {
		id := fmt.Sprintf("s%02d", i)
		ts := got[id]
		if len(ts) != ticks {
			t.Fatalf("%s got %d events, want %d", id, len(ts), ticks)
		}
		for j, tk := range ts {
			if tk != Tick(j+1) {
				t.Fatalf("%s: event %d at tick %d", id, j, tk)
			}
		}
	}
}

// TestSHBCatchupKeepsEventsAhead: a subscriber back from an outage is
// catching up (its first 10 ticks must be fetched: the tail holds one
// event) while the istream goes on delivering ticks 11-100. The catch-up
// session keeps those events as they pass, so it never nacks them, and it
// delivers all 100 in order once the first 10 are answered (fails without
// keepAhead: tick 11 nacked).
func TestSHBCatchupKeepsEventsAhead(t *testing.T) {
	h := newFetchHarness(t)
	s, step, nacked := h.s, h.step, h.nacked
	data := func(tk Tick) Msg {
		ev := match.MustEvent(match.Attr{Name: "g", Value: match.Int(int64(tk))})
		return Msg{Kind: MsgData, Pubend: "p", Tick: tk, Prev: tk - 1, Event: ev}
	}
	all := match.MustParse(`g >= 0`)
	step(Msg{Kind: MsgResume, Sub: "s", Session: 1, Filter: all}, "s")
	step(ackInstall(s, "s", CT{"p": 0}), "r")
	step(Msg{Kind: MsgDisconnect, Sub: "s", Session: 1}, "s")
	for tk := Tick(1); tk <= 10; tk++ {
		step(data(tk), "r")
	}
	step(Msg{Kind: MsgResume, Sub: "s", Session: 2, Filter: all, HasCT: true, CT: CT{"p": 0}}, "s")
	h.tick(s.cfg.NackDelay)
	for tk := Tick(11); tk <= 100; tk++ {
		step(data(tk), "r")
	}
	if got := h.got["s"]; len(got) != 0 {
		t.Fatalf("delivered %v before tick 1 was answered", got)
	}
	for tk := Tick(1); tk <= 10; tk++ {
		if tk < 10 && nacked[tk] == 0 {
			t.Fatalf("tick %d (not at hand) was never nacked", tk)
		}
		step(data(tk), "r") // the answer (tick 10 left the tail meanwhile)
	}
	for tk := Tick(11); tk <= 100; tk++ {
		if nacked[tk] != 0 {
			t.Fatalf("tick %d nacked %d times although the SHB saw it while the session caught up", tk, nacked[tk])
		}
	}
	got := h.got["s"]
	if len(got) != 100 {
		t.Fatalf("got %d events, want 100", len(got))
	}
	for i, tk := range got {
		if tk != Tick(i+1) {
			t.Fatalf("event %d at tick %d", i, tk)
		}
	}
}
