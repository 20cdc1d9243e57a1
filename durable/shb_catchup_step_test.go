package durable

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// stepModel is the subscribers of TestSHBSelectiveSteppingMatchesStepAll:
// each one's session, whether it is connected, and the last tick its
// session conveyed (its CT).
type stepModel struct {
	e       *env
	ids     []string
	filters map[string]match.Filter
	session map[string]uint64
	on      map[string]bool
	ct      map[string]Tick
	autoAck bool
	seq     uint64
}

func newStepModel(rt *rapid.T, e *env) *stepModel {
	g := &stepModel{e: e, filters: map[string]match.Filter{}, session: map[string]uint64{},
		on: map[string]bool{}, ct: map[string]Tick{}}
	groups := rapid.IntRange(1, 4).Draw(rt, "groups")
	for i := range rapid.IntRange(2, 6).Draw(rt, "subs") {
		id := fmt.Sprintf("s%d", i)
		text := fmt.Sprintf("g == %d", i%groups)
		if rapid.Bool().Draw(rt, "overlap") {
			text = fmt.Sprintf("g >= %d", i%groups) // overlapping filters share ticks
		}
		g.ids = append(g.ids, id)
		g.filters[id] = match.MustParse(text)
	}
	e.client = g.saw
	return g
}

// saw follows what the SHB tells a subscriber's current session, and
// acknowledges every event when autoAck is set.
func (g *stepModel) saw(env Envelope) {
	m := env.Msg
	if _, ok := g.filters[env.To]; !ok || m.Session != g.session[env.To] || !g.on[env.To] {
		return
	}
	switch m.Kind {
	case MsgStart:
		g.ct[env.To] = m.CT["p"]
	case MsgEvent, MsgSubSilence:
		g.ct[env.To] = m.Tick
	case MsgGap:
		g.ct[env.To] = m.To
	}
	if g.autoAck && m.Kind == MsgEvent {
		g.e.queue = append(g.e.queue, Envelope{From: env.To, To: "shb", Msg: Msg{Kind: MsgAck, Sub: env.To, CT: CT{"p": m.Tick}}})
	}
}

func (g *stepModel) resume(rt *rapid.T, id string) {
	g.session[id]++
	g.on[id] = true
	m := Msg{Kind: MsgResume, Sub: id, Session: g.session[id], Filter: g.filters[id]}
	if rapid.Bool().Draw(rt, "hasCT") {
		m.HasCT, m.CT = true, CT{"p": Tick(rapid.IntRange(0, int(g.ct[id])).Draw(rt, "ct"))}
	}
	g.e.queue = append(g.e.queue, Envelope{From: id, To: "shb", Msg: m})
}

// op applies one random input to the env.
func (g *stepModel) op(rt *rapid.T) {
	e := g.e
	id := rapid.SampledFrom(g.ids).Draw(rt, "sub")
	var b strings.Builder
	switch rapid.IntRange(0, 9).Draw(rt, "op") {
	case 0: // a burst of events
		for range rapid.IntRange(1, 60).Draw(rt, "events") {
			g.seq++
			e.now++
			ev := match.MustEvent(match.Attr{Name: "g", Value: match.Int(int64(rapid.IntRange(0, 3).Draw(rt, "g")))})
			e.queue = append(e.queue, Envelope{From: "pub", To: "phb", Msg: Msg{Kind: MsgPublish, Publisher: "pub", Seq: g.seq, Event: ev}})
		}
	case 1, 2: // the network carries some messages
		for range rapid.IntRange(1, 400).Draw(rt, "msgs") {
			if len(e.queue) == 0 {
				break
			}
			e.deliverOne(&b)
		}
	case 3: // time passes, timers fire
		e.now += Tick(rapid.IntRange(100, 60_000).Draw(rt, "dt"))
		e.tick()
	case 4:
		if g.on[id] {
			g.on[id] = false
			e.queue = append(e.queue, Envelope{From: id, To: "shb", Msg: Msg{Kind: MsgDisconnect, Sub: id, Session: g.session[id]}})
		}
	case 5:
		if !g.on[id] {
			g.resume(rt, id)
		}
	case 6:
		if g.on[id] {
			e.queue = append(e.queue, Envelope{From: id, To: "shb", Msg: Msg{Kind: MsgAck, Sub: id, CT: CT{"p": g.ct[id]}}})
		}
	case 7: // answers lost on the way: nacks retried, covers expire
		e.drops[MsgData] = rapid.IntRange(1, 30).Draw(rt, "drops")
	case 8:
		g.autoAck = !g.autoAck
	case 9: // the SHB goes down, or comes back (its subscribers away)
		if e.down["shb"] {
			delete(e.down, "shb")
			e.bootSHB("shb")
			for _, id := range g.ids {
				g.on[id] = false
			}
		} else {
			e.down["shb"] = true
		}
	}
}

// TestSHBSelectiveSteppingMatchesStepAll is the differential test of the
// SHB's selective stepping (shb_catchup_step.go): a PHB - r - SHB env
// with 2 to 6 subscribers (disjoint or overlapping filters), small
// queues, tails and catch-up windows, sometimes early release, under
// random bursts of events, partial deliveries, timer firings,
// disconnections, resumes with and without (older) CTs, withheld and
// given acknowledgements, lost answers and SHB restarts. Beside the SHB
// runs a reference that steps every catching session after every input
// (SHB.stepAll, with the old offer to every session): every Ready, error
// and stat must be the same at every step (env.stepSHB). The runs must
// reach catch-up nacks, covers, gaps and steps left out, so that the
// paths compared were taken.
func TestSHBSelectiveSteppingMatchesStepAll(t *testing.T) {
	var nacks, covers, gaps, steps, refSteps int
	rapid.Check(t, func(rt *rapid.T) {
		o := envOpts{routers: 1, idleSilence: 1,
			subQueue: rapid.IntRange(1, 16).Draw(rt, "queue"),
			tailSize: rapid.IntRange(1, 64).Draw(rt, "tail"),
			window:   rapid.IntRange(1, 32).Draw(rt, "window")}
		if rapid.Bool().Draw(rt, "early") {
			o.maxRetain = Tick(rapid.IntRange(1_000, 200_000).Draw(rt, "maxRetain"))
		}
		e := newEnv(rt, o)
		g := newStepModel(rt, e)
		for _, id := range g.ids {
			g.resume(rt, id)
		}
		for range rapid.IntRange(1, 120).Draw(rt, "ops") {
			g.op(rt)
		}
		// Everything back and acknowledged, until quiet.
		delete(e.down, "shb")
		if e.shbs["shb"] == nil {
			e.bootSHB("shb")
		}
		g.autoAck = true
		for _, id := range g.ids {
			if !g.on[id] {
				g.resume(rt, id)
			}
		}
		for range 200 {
			e.now += 10_000
			e.tick()
			e.deliver()
		}
		st, ref := e.shbs["shb"].Stats, e.twins["shb"].Stats
		nacks += st.CatchupNack
		covers += st.CatchupCovers
		gaps += st.Gaps
		steps += st.CatchupSteps
		refSteps += ref.CatchupSteps
	})
	t.Logf("catch-up nacks %d, covers %d, gaps %d; sessions stepped %d, by the reference %d", nacks, covers, gaps, steps, refSteps)
	if nacks == 0 || covers == 0 || gaps == 0 || steps >= refSteps {
		t.Fatalf("paths not exercised: catch-up nacks %d, covers %d, gaps %d, sessions stepped %d (reference %d)", nacks, covers, gaps, steps, refSteps)
	}
}

// TestSHBCatchupStepsChangedSessions: with n sessions catching up, each
// with a full window nacked and unanswered, an input that changes one
// of them (its subscriber's acknowledgement) steps that one session, and
// an answer to a tick one session waits for steps that one, whatever n
// is; before, each input stepped all n.
func TestSHBCatchupStepsChangedSessions(t *testing.T) {
	for _, n := range []int{10, 100} {
		s, step := catchingSHB(t, n, 3*n)
		before := s.Stats.CatchupSteps
		step(Msg{Kind: MsgAck, Sub: "s0000", CT: CT{"p": 0}}, "s0000")
		if got := s.Stats.CatchupSteps - before; got != 1 {
			t.Fatalf("%d sessions catching up: an acknowledgement stepped %d sessions, want 1", n, got)
		}
		before = s.Stats.CatchupSteps
		ev := match.MustEvent(match.Attr{Name: "g", Value: match.Int(3)})
		step(Msg{Kind: MsgData, Pubend: "p", Tick: 3, Prev: 2, Event: ev}, "r")
		if got := s.Stats.CatchupSteps - before; got != 1 {
			t.Fatalf("%d sessions catching up: an answer for one session stepped %d sessions, want 1", n, got)
		}
	}
}

// catchingSHB returns an SHB with subs sessions catching up on pubend p
// from CT 0, subscriber i matching the events g == i of ticks 1..ticks
// (tick t has g = t mod subs), every session's ticks nacked and
// unanswered (a tail of one event), and a step function that applies
// an input and its Ready at the next microsecond.
func catchingSHB(tb testing.TB, subs, ticks int) (*SHB, func(Msg, string)) {
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}, TailSize: 1}, st)
	if err != nil {
		tb.Fatal(err)
	}
	var now Tick
	step := func(m Msg, from string) {
		now++
		if err := s.Step(now, Envelope{From: from, To: "shb", Msg: m}); err != nil {
			tb.Fatal(err)
		}
		rd := s.Ready()
		if err := st.Apply(rd.Writes, rd.Sync); err != nil {
			tb.Fatal(err)
		}
	}
	filter := func(i int) match.Filter { return match.MustParse(fmt.Sprintf("g == %d", i)) }
	for i := range subs {
		id := fmt.Sprintf("s%04d", i)
		step(Msg{Kind: MsgResume, Sub: id, Session: 1, Filter: filter(i)}, id)
		step(ackInstall(s, id, CT{"p": 0}), "r")
		step(Msg{Kind: MsgDisconnect, Sub: id, Session: 1}, id)
	}
	for t := Tick(1); t <= Tick(ticks); t++ {
		ev := match.MustEvent(match.Attr{Name: "g", Value: match.Int(int64(t) % int64(subs))})
		step(Msg{Kind: MsgData, Pubend: "p", Tick: t, Prev: t - 1, Event: ev}, "r")
	}
	for i := range subs {
		id := fmt.Sprintf("s%04d", i)
		step(Msg{Kind: MsgResume, Sub: id, Session: 2, Filter: filter(i), HasCT: true, CT: CT{"p": 0}}, id)
	}
	now += s.cfg.NackRetry // past every session's hold: their first nacks go
	if err := s.Tick(now); err != nil {
		tb.Fatal(err)
	}
	rd := s.Ready()
	if err := st.Apply(rd.Writes, rd.Sync); err != nil {
		tb.Fatal(err)
	}
	return s, step
}

// TestSHBCatchupsStatus: Catchups reports every catching session with its
// first pending tick, and that tick nacked on its own or in a live cover;
// an answer moves the session it was for to its next tick.
func TestSHBCatchupsStatus(t *testing.T) {
	const n = 10
	s, step := catchingSHB(t, n, 3*n)
	check := func(want map[string]Tick) {
		t.Helper()
		got := s.Catchups()
		if len(got) != n {
			t.Fatalf("%d catch-up streams reported, want %d: %+v", len(got), n, got)
		}
		for i, st := range got {
			id := fmt.Sprintf("s%04d", i)
			first := Tick(i)
			if i == 0 {
				first = n
			}
			if w, ok := want[id]; ok {
				first = w
			}
			if st.Sub != id || st.Pubend != "p" || st.First != first || st.AtHand || (st.Nacks == 0 && st.CoveredUntil == 0) {
				t.Fatalf("stream %d: %+v, want %s waiting for tick %d, nacked or covered", i, st, id, first)
			}
		}
	}
	check(nil)
	ev := match.MustEvent(match.Attr{Name: "g", Value: match.Int(3)})
	step(Msg{Kind: MsgData, Pubend: "p", Tick: 3, Prev: 2, Event: ev}, "r")
	check(map[string]Tick{"s0003": 13})
}
