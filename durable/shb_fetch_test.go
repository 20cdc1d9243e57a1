package durable

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestSHBCatchupSharesNacks: 20 subscribers with the same filter come
// back at once to a backlog of 100 ticks (tail of 1, so every event is
// fetched): once all are back, each tick is nacked upstream once, not once per session, and
// one answer per tick completes every session, each getting all 100
// events in order.
func TestSHBCatchupSharesNacks(t *testing.T) {
	const subs, ticks = 20, 100
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}, TailSize: 1}, st)
	if err != nil {
		t.Fatal(err)
	}
	var now Tick
	nacked := map[Tick]int{}
	got := map[string][]Tick{}
	handle := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		rd := s.Ready()
		if err := st.Apply(rd.Writes, rd.Sync); err != nil {
			t.Fatal(err)
		}
		for _, env := range rd.Msgs {
			switch env.Msg.Kind {
			case MsgNack:
				for _, r := range env.Msg.Ranges {
					for tk := r.From; tk <= r.To; tk++ {
						nacked[tk]++
					}
				}
			case MsgEvent:
				got[env.To] = append(got[env.To], env.Msg.Tick)
			}
		}
	}
	step := func(m Msg, from string) {
		t.Helper()
		now++
		handle(s.Step(now, Envelope{From: from, To: "shb", Msg: m}))
	}
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
	now += s.cfg.NackDelay // the sessions' first nacks are held until all are back
	handle(s.Tick(now))
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
