package durable

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// coverRig drives one SHB against a PHB played by the test: every nack is
// answered from a log of D ticks (S between them), and the test counts
// the nacked ranges, the events answered and each subscriber's events.
type coverRig struct {
	t        *testing.T
	s        *SHB
	st       *mapStore
	now      Tick
	log      map[Tick]match.Event
	nacks    []Range
	answered int
	got      map[string][]Tick
	// hold keeps the answers in held instead of stepping them: the
	// sessions' round trips overlap.
	hold bool
	held []Envelope
}

func newCoverRig(t *testing.T) *coverRig {
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}, TailSize: 1}, st)
	if err != nil {
		t.Fatal(err)
	}
	return &coverRig{t: t, s: s, st: st, log: map[Tick]match.Event{}, got: map[string][]Tick{}}
}

// step hands m to the SHB, applies its writes and answers its nacks, and
// those the answers cause, until the SHB is quiet.
func (g *coverRig) step(m Msg, from string) {
	g.t.Helper()
	queue := []Envelope{{From: from, To: "shb", Msg: m}}
	for len(queue) > 0 {
		env := queue[0]
		queue = queue[1:]
		g.now++
		if err := g.s.Step(g.now, env); err != nil {
			g.t.Fatal(err)
		}
		rd := g.s.Ready()
		if err := g.st.Apply(rd.Writes, rd.Sync); err != nil {
			g.t.Fatal(err)
		}
		for _, out := range rd.Msgs {
			switch out.Msg.Kind {
			case MsgNack:
				for _, r := range out.Msg.Ranges {
					g.nacks = append(g.nacks, r)
					if g.hold {
						g.held = append(g.held, g.answer(r)...)
					} else {
						queue = append(queue, g.answer(r)...)
					}
				}
			case MsgEvent:
				g.got[out.To] = append(g.got[out.To], out.Msg.Tick)
			}
		}
	}
}

// answer is the PHB's answer to a nack of r: D for each logged tick.
func (g *coverRig) answer(r Range) []Envelope {
	var envs []Envelope
	prev := r.From - 1
	for t := r.From; t <= r.To; t++ {
		if e, ok := g.log[t]; ok {
			envs = append(envs, Envelope{From: "r", To: "shb", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: t, Prev: prev, Event: e}})
			prev = t
			g.answered++
		}
	}
	return envs
}

// backlog registers subs subscribers with the disjoint filters g == i,
// connected or not, and logs ticks 1..ticks with g = tick mod subs, each
// delivered live to the connected ones and recorded in the PFS.
func (g *coverRig) backlog(subs, ticks int, connected func(i int) bool) {
	for i := range subs {
		id := fmt.Sprintf("s%02d", i)
		f := match.MustParse(fmt.Sprintf("g == %d", i))
		g.step(Msg{Kind: MsgResume, Sub: id, Session: 1, Filter: f}, id)
		g.step(Msg{Kind: MsgInstallAck, Sub: id, CT: CT{"p": 0}}, "r")
		if !connected(i) {
			g.step(Msg{Kind: MsgDisconnect, Sub: id, Session: 1}, id)
		}
	}
	for tk := Tick(1); tk <= Tick(ticks); tk++ {
		e := match.MustEvent(match.Attr{Name: "g", Value: match.Int(int64(int(tk) % subs))})
		g.log[tk] = e
		g.step(Msg{Kind: MsgData, Pubend: "p", Tick: tk, Prev: tk - 1, Event: e}, "r")
	}
	clear(g.got)
}

// release steps the held answers, and answers what they cause at once.
func (g *coverRig) release() {
	g.t.Helper()
	g.hold = false
	for _, env := range g.held {
		g.step(env.Msg, env.From)
	}
	g.held = nil
}

// resume brings subscriber i back with CT 0.
func (g *coverRig) resume(i, subs int) {
	id := fmt.Sprintf("s%02d", i)
	f := match.MustParse(fmt.Sprintf("g == %d", i))
	g.step(Msg{Kind: MsgResume, Sub: id, Session: 2, Filter: f, HasCT: true, CT: CT{"p": 0}}, id)
}

// complete checks that subscriber i got each of its ticks once, in order.
func (g *coverRig) complete(i, subs, ticks int) {
	g.t.Helper()
	id := fmt.Sprintf("s%02d", i)
	var want []Tick
	for tk := 1; tk <= ticks; tk++ {
		if tk%subs == i {
			want = append(want, Tick(tk))
		}
	}
	if fmt.Sprint(g.got[id]) != fmt.Sprint(want) {
		g.t.Fatalf("%s got %v, want %v", id, g.got[id], want)
	}
}

// TestSHBCatchupCoversDisjointSessions: 50 subscribers with disjoint
// filters back (their nacks' answers overlapping) to a backlog of 2,000 ticks (tail of 1, so every
// event is fetched): the sessions' windows are fetched as shared ranges,
// not a nack per tick, every subscriber gets each of its events once and
// in order, and no more than coverDensity times the backlog is answered.
func TestSHBCatchupCoversDisjointSessions(t *testing.T) {
	const subs, ticks = 50, 2000
	g := newCoverRig(t)
	g.backlog(subs, ticks, func(int) bool { return false })
	g.hold = true
	for i := range subs {
		g.resume(i, subs)
	}
	g.release()
	for i := range subs {
		g.complete(i, subs, ticks)
	}
	if g.s.Stats.CatchupCovers == 0 {
		t.Fatalf("no cover: %d nacked ranges", len(g.nacks))
	}
	// The first sessions back are alone and sparse (one record in 50 is
	// theirs) and nack tick by tick; once half of them are back, their
	// windows are dense and fetched as ranges.
	if len(g.nacks) >= ticks/2 {
		t.Fatalf("%d nacked ranges for %d ticks: not fetched as ranges", len(g.nacks), ticks)
	}
	if g.answered > coverDensity*ticks {
		t.Fatalf("%d events answered for a backlog of %d", g.answered, ticks)
	}
	t.Logf("%d ranges nacked (%d covers), %d events answered for %d", len(g.nacks), g.s.Stats.CatchupCovers, g.answered, ticks)
}

// TestSHBCatchupSparseNacksTicks: one subscriber behind among 19 up to
// date wants one PFS record in 20 of the span it misses: it nacks its
// own ticks, never a range that would fetch the others' events.
func TestSHBCatchupSparseNacksTicks(t *testing.T) {
	const subs, ticks = 20, 400
	g := newCoverRig(t)
	g.backlog(subs, ticks, func(i int) bool { return i != 7 })
	g.resume(7, subs)
	g.complete(7, subs, ticks)
	if g.s.Stats.CatchupCovers != 0 {
		t.Fatalf("%d covers for a sparse span", g.s.Stats.CatchupCovers)
	}
	for _, r := range g.nacks {
		if r.From != r.To || int(r.From)%subs != 7 {
			t.Fatalf("nacked %v: not one of s07's ticks", r)
		}
	}
	if g.answered != ticks/subs {
		t.Fatalf("%d events answered, want %d", g.answered, ticks/subs)
	}
}
