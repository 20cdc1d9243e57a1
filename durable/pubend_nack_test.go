package durable

import (
	"reflect"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestPubendNackAnswersBounded: a pubend with 5,000 logged events is
// nacked for all of them, and again for a part not answered yet while it
// answers:
// no Step or Tick answers more than nackAnswerBudget events, and in all
// every tick is answered exactly once (D for each event, S between), in
// order, with no gap and nothing above the range. AnswersPending counts
// the ticks not answered yet.
func TestPubendNackAnswersBounded(t *testing.T) {
	st := newMapStore()
	p, err := NewPubend(PubendConfig{ID: "p", Node: "phb", Downstream: []string{"r"}}, st)
	if err != nil {
		t.Fatal(err)
	}
	now := Tick(1_000_000)
	const n = 5000
	for i := range n {
		p.Step(now, Envelope{From: "pub", To: "phb", Msg: Msg{Kind: MsgPublish, Publisher: "a", Seq: uint64(i + 1),
			Event: match.MustEvent(match.Attr{Name: "i", Value: match.Int(int64(i))})}})
		now++
		if i%500 == 499 {
			rd := p.Ready()
			if err := st.Apply(rd.Writes, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.Tick(now)
	rd := p.Ready()
	st.Apply(rd.Writes, true)
	last := p.LastAnnounced()

	var covered Tick // every tick up to here answered
	events := 0
	take := func(what string) {
		t.Helper()
		got := 0
		for _, env := range p.Ready().Msgs {
			if env.To != "shb" {
				continue
			}
			m := env.Msg
			switch m.Kind {
			case MsgData:
				if m.Prev != covered {
					t.Fatalf("%s: data at %d after %d, prev %d", what, m.Tick, covered, m.Prev)
				}
				covered = m.Tick
				events++
				got++
			case MsgSilence:
				if m.From != covered+1 {
					t.Fatalf("%s: silence [%d,%d] after %d", what, m.From, m.To, covered)
				}
				covered = m.To
			}
		}
		if got > nackAnswerBudget {
			t.Fatalf("%s: %d events answered at once, over the budget %d", what, got, nackAnswerBudget)
		}
		if pending := p.AnswersPending(); pending != last-covered {
			t.Fatalf("%s: %d ticks pending, want the %d not answered yet", what, pending, last-covered)
		}
	}
	if err := p.Step(now, Envelope{From: "shb", To: "phb", Msg: Msg{Kind: MsgNack, Ranges: []Range{{1, last}}}}); err != nil {
		t.Fatal(err)
	}
	take("nack")
	if err := p.Step(now, Envelope{From: "shb", To: "phb", Msg: Msg{Kind: MsgNack, Ranges: []Range{{covered + 10, last}}}}); err != nil {
		t.Fatal(err)
	}
	take("repeated nack")
	for i := 0; covered < last; i++ {
		if i > n {
			t.Fatalf("answers stop at %d of %d", covered, last)
		}
		now += 5_000
		p.Tick(now)
		take("tick")
	}
	if covered != last || events != n {
		t.Fatalf("answered up to %d with %d events, want %d and %d", covered, events, last, n)
	}
}

// TestPubendNackRepeatDuringAnswer: an SHB asks again, from where it
// stands, while the pubend is still answering its first nack. The ticks
// already answered are on their way and are not answered again, so every
// event goes out once; once the answer is complete, a nack for the same
// ticks is answered again in full (the answer may have been lost).
func TestPubendNackRepeatDuringAnswer(t *testing.T) {
	const n = 3 * nackAnswerBudget
	p, now := newLoggedPubend(t, n)
	last := p.LastAnnounced()
	sent := map[Tick]int{}
	take := func() {
		for _, env := range p.Ready().Msgs {
			if env.To == "shb" && env.Msg.Kind == MsgData {
				sent[env.Msg.Tick]++
			}
		}
	}
	nack := func() {
		t.Helper()
		if err := p.Step(now, Envelope{From: "shb", To: "phb", Msg: Msg{Kind: MsgNack, Ranges: []Range{{1, last}}}}); err != nil {
			t.Fatal(err)
		}
		take()
	}
	nack()
	nack() // asked again from the start while the answer goes on
	for p.AnswersPending() > 0 {
		now += 5_000
		p.Tick(now)
		take()
	}
	if len(sent) != n {
		t.Fatalf("%d events answered, want %d", len(sent), n)
	}
	for tk, c := range sent {
		if c != 1 {
			t.Fatalf("tick %d answered %d times while its answer was on its way", tk, c)
		}
	}
	nack() // the answer is complete: asked again, answered again
	for p.AnswersPending() > 0 {
		now += 5_000
		p.Tick(now)
		take()
	}
	for tk, c := range sent {
		if c != 2 {
			t.Fatalf("tick %d answered %d times after a nack that followed the complete answer, want 2", tk, c)
		}
	}
}

// TestPubendRefetchDuringAnswer: while the pubend answers an SHB's long
// nack (an outage's recovery), a refetch (a catch-up session's nack for
// ticks the answer already brought by) is answered at once, ahead of the
// rest of the answer, which goes on from where it stood, each of its
// events once; the same nack unmarked is left out as answered lately.
func TestPubendRefetchDuringAnswer(t *testing.T) {
	const n = 4 * nackAnswerBudget
	p, now := newLoggedPubend(t, n)
	last := p.LastAnnounced()
	sent := map[Tick]int{}
	take := func() (ticks []Tick) {
		for _, env := range p.Ready().Msgs {
			if env.To == "shb" && env.Msg.Kind == MsgData {
				sent[env.Msg.Tick]++
				ticks = append(ticks, env.Msg.Tick)
			}
		}
		return ticks
	}
	nack := func(r Range, refetch bool) []Tick {
		t.Helper()
		if err := p.Step(now, Envelope{From: "shb", To: "phb", Msg: Msg{Kind: MsgNack, Ranges: []Range{r}, Refetch: refetch}}); err != nil {
			t.Fatal(err)
		}
		return take()
	}
	first := nack(Range{1, last}, false)[0] // the recovery: its first budget of events
	again := Range{first + 10, first + 19}
	if got := nack(again, false); len(got) != nackAnswerBudget || got[0] != first+nackAnswerBudget {
		t.Fatalf("unmarked nack of ticks answered lately: answer goes on from %v (%d events), want from %d", got[:1], len(got), first+nackAnswerBudget)
	}
	got := nack(again, true)
	if len(got) < 10 || got[0] != again.From || got[9] != again.To {
		t.Fatalf("refetch of %v during the answer: got %d events from %v, want its ten first", again, len(got), got[:min(len(got), 1)])
	}
	for p.AnswersPending() > 0 {
		now += 5_000
		p.Tick(now)
		take()
	}
	for i := range Tick(n) {
		want := 1
		if again.Contains(first + i) {
			want = 2
		}
		if sent[first+i] != want {
			t.Fatalf("tick %d answered %d times, want %d", first+i, sent[first+i], want)
		}
	}
}

// newLoggedPubend returns a pubend (downstream r) that has logged and
// announced n events, and the tick after the last.
func newLoggedPubend(t *testing.T, n int) (*Pubend, Tick) {
	t.Helper()
	st := newMapStore()
	p, err := NewPubend(PubendConfig{ID: "p", Node: "phb", Downstream: []string{"r"}}, st)
	if err != nil {
		t.Fatal(err)
	}
	now := Tick(1_000_000)
	for i := range n {
		p.Step(now, Envelope{From: "pub", To: "phb", Msg: Msg{Kind: MsgPublish, Publisher: "a", Seq: uint64(i + 1),
			Event: match.MustEvent(match.Attr{Name: "i", Value: match.Int(int64(i))})}})
		now++
	}
	st.Apply(p.Ready().Writes, true)
	p.Tick(now)
	st.Apply(p.Ready().Writes, true)
	return p, now
}

// TestPubendAnswerTickMatchesScan: a one-tick range answered by a point
// lookup (answerTick) gets the same messages and answered span as the
// scan that answered it before (answerScan), for every tick of a log with
// events and runs of silence between them, and for ticks nacked again.
func TestPubendAnswerTickMatchesScan(t *testing.T) {
	st := newMapStore()
	p, err := NewPubend(PubendConfig{ID: "p", Node: "phb", Downstream: []string{"r"}}, st)
	if err != nil {
		t.Fatal(err)
	}
	now := Tick(1_000_000)
	for i := range 200 {
		p.Step(now, Envelope{From: "pub", To: "phb", Msg: Msg{Kind: MsgPublish, Publisher: "a", Seq: uint64(i + 1),
			Event: match.MustEvent(match.Attr{Name: "i", Value: match.Int(int64(i))})}})
		now += Tick(1 + i%7*3) // runs of silence between some events
		rd := p.Ready()
		if err := st.Apply(rd.Writes, true); err != nil {
			t.Fatal(err)
		}
	}
	p.Tick(now)
	rd := p.Ready()
	if err := st.Apply(rd.Writes, true); err != nil {
		t.Fatal(err)
	}
	var ticks []Tick
	for tick := Tick(1_000_000 - 2); tick <= p.LastAnnounced(); tick++ {
		ticks = append(ticks, tick)
	}
	ticks = append(ticks, 1_000_000, 1_000_000, 1_000_001, 1_000_003) // again
	events := 0
	for _, tick := range ticks {
		before, had := p.answered["shb"]
		_, n, err := p.answerScan("shb", Range{tick, tick}, 1)
		if err != nil {
			t.Fatal(err)
		}
		events += n
		want, wantSpan := p.Ready().Msgs, p.answered["shb"]
		if delete(p.answered, "shb"); had {
			p.answered["shb"] = before
		}
		rest, m, err := p.answerRange("shb", Range{tick, tick}, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, gotSpan := p.Ready().Msgs, p.answered["shb"]
		if !rest.Empty() || m != n || !reflect.DeepEqual(got, want) || gotSpan != wantSpan {
			t.Fatalf("tick %d: lookup answered %v (%d events, span %v, left %v), the scan %v (%d, span %v)",
				tick, got, m, gotSpan, rest, want, n, wantSpan)
		}
	}
	if events != 200+3 {
		t.Fatalf("%d events answered, want the 200 logged and 3 of them again", events)
	}
}
