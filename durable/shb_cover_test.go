package durable

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
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

func newCoverRig(t *testing.T) *coverRig { return newCoverRigTail(t, 1) }

// newCoverRigTail is newCoverRig with a tail (and fetched events) of n.
func newCoverRigTail(t *testing.T, n int) *coverRig {
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}, TailSize: n}, st)
	if err != nil {
		t.Fatal(err)
	}
	return &coverRig{t: t, s: s, st: st, log: map[Tick]match.Event{}, got: map[string][]Tick{}}
}

// step hands m to the SHB, applies its writes and answers its nacks, and
// those the answers cause, until the SHB is quiet.
func (g *coverRig) step(m Msg, from string) {
	g.t.Helper()
	g.now++
	g.run(g.s.Step(g.now, Envelope{From: from, To: "shb", Msg: m}))
}

// tick fires the SHB's timer NackDelay later (a held first nack goes out)
// and handles what follows as step does.
func (g *coverRig) tick() {
	g.t.Helper()
	g.now += g.s.cfg.NackDelay
	g.run(g.s.Tick(g.now))
}

// run handles the output of the SHB's last step (err its error), then
// steps the answers of its nacks in turn until the SHB is quiet.
func (g *coverRig) run(err error) {
	g.t.Helper()
	var queue []Envelope
	for {
		if err != nil {
			g.t.Fatal(err)
		}
		queue = append(queue, g.handle()...)
		if len(queue) == 0 {
			return
		}
		env := queue[0]
		queue = queue[1:]
		g.now++
		err = g.s.Step(g.now, env)
	}
}

// handle applies the SHB's writes, records its nacks and events, and
// returns the answers to step now (none while g.hold).
func (g *coverRig) handle() []Envelope {
	g.t.Helper()
	rd := g.s.Ready()
	if err := g.st.Apply(rd.Writes, rd.Sync); err != nil {
		g.t.Fatal(err)
	}
	var answers []Envelope
	for _, out := range rd.Msgs {
		switch out.Msg.Kind {
		case MsgNack:
			for _, r := range out.Msg.Ranges {
				g.nacks = append(g.nacks, r)
				if g.hold {
					g.held = append(g.held, g.answer(r)...)
				} else {
					answers = append(answers, g.answer(r)...)
				}
			}
		case MsgEvent:
			g.got[out.To] = append(g.got[out.To], out.Msg.Tick)
		}
	}
	return answers
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
		g.step(ackInstall(g.s, id, CT{"p": 0}), "r")
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
// filters back together (their nacks' answers overlapping) to a backlog
// of 2,000 ticks (tail of 1, so every event is fetched): their first
// nacks are held until all are back, so the backlog is fetched as shared
// covers (two: the first session's window starts at tick 50, the second's
// at 1), no tick nacked on its own, every event answered once, and every subscriber gets each
// of its events once and in order.
func TestSHBCatchupCoversDisjointSessions(t *testing.T) {
	const subs, ticks = 50, 2000
	g := newCoverRig(t)
	g.backlog(subs, ticks, func(int) bool { return false })
	g.hold = true
	for i := range subs {
		g.resume(i, subs)
	}
	if len(g.nacks) != 0 {
		t.Fatalf("%d ranges nacked while sessions were still coming back", len(g.nacks))
	}
	g.tick()
	g.release()
	for i := range subs {
		g.complete(i, subs, ticks)
	}
	if g.s.Stats.CatchupCovers > 2 || g.s.Stats.CatchupNack != 0 {
		t.Fatalf("%d covers and %d single ticks nacked (%v), want two covers", g.s.Stats.CatchupCovers, g.s.Stats.CatchupNack, g.nacks)
	}
	if g.answered != ticks {
		t.Fatalf("%d events answered for a backlog of %d", g.answered, ticks)
	}
}

// TestSHBCatchupCoverLeavesOutInFlight: one subscriber back alone nacks
// its sparse ticks one by one; the 49 others back later (answers still on
// the way) fetch the backlog as covers around those ticks: no tick is
// asked for twice, and everyone is complete and in order.
func TestSHBCatchupCoverLeavesOutInFlight(t *testing.T) {
	const subs, ticks = 50, 2000
	g := newCoverRig(t)
	g.backlog(subs, ticks, func(int) bool { return false })
	g.hold = true
	g.resume(0, subs)
	g.tick()
	// Every tick of s00 but the last, which the tail (of one) holds.
	if g.s.Stats.CatchupCovers != 0 || g.s.Stats.CatchupNack != ticks/subs-1 {
		t.Fatalf("alone: %d covers, %d ticks nacked; want 0 and %d", g.s.Stats.CatchupCovers, g.s.Stats.CatchupNack, ticks/subs-1)
	}
	for i := 1; i < subs; i++ {
		g.resume(i, subs)
	}
	g.tick()
	g.release()
	for i := range subs {
		g.complete(i, subs, ticks)
	}
	if g.s.Stats.CatchupCovers == 0 {
		t.Fatalf("no cover: %d nacked ranges", len(g.nacks))
	}
	seen := map[Tick]bool{}
	for _, r := range g.nacks {
		for tk := r.From; tk <= r.To; tk++ {
			if seen[tk] {
				t.Fatalf("tick %d nacked twice (%v)", tk, g.nacks)
			}
			seen[tk] = true
		}
	}
	if g.answered != ticks-1 {
		t.Fatalf("%d events answered for a backlog of %d (the tail holds the last)", g.answered, ticks)
	}
}

// TestSHBCatchupSparseNacksTicks: one subscriber behind among 19 up to
// date wants one PFS record in 20 of the span it misses: it nacks its
// own ticks, never a range that would fetch the others' events, and the
// declined cover is not tried again as its window slides.
func TestSHBCatchupSparseNacksTicks(t *testing.T) {
	const subs, ticks = 20, 6000
	g := newCoverRig(t)
	g.backlog(subs, ticks, func(i int) bool { return i != 7 })
	g.resume(7, subs)
	g.tick()
	g.complete(7, subs, ticks)
	if g.s.Stats.CatchupCovers != 0 {
		t.Fatalf("%d covers for a sparse span", g.s.Stats.CatchupCovers)
	}
	if g.s.Stats.CoverDeclines != 1 {
		t.Fatalf("%d covers declined for one session catching up %d ticks, want 1", g.s.Stats.CoverDeclines, ticks/subs)
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

// TestHoledProperty: a cover's ranges are ascending, disjoint, inside the
// span, start at its first tick, hold no tick in flight and every other
// tick up to their end, and stop at the first hole past CatchupWindow.
func TestHoledProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := &SHB{cfg: SHBConfig{CatchupWindow: rapid.IntRange(1, 8).Draw(t, "window")}}
		from := Tick(rapid.IntRange(1, 100).Draw(t, "from"))
		r := Range{from, from + Tick(rapid.IntRange(1, 60).Draw(t, "len"))}
		in := map[Tick]bool{}
		var inFlight []Tick
		for tk := r.From + 1; tk <= r.To; tk++ {
			if rapid.Bool().Draw(t, "hole") {
				in[tk] = true
				inFlight = append(inFlight, tk)
			}
		}
		rs := s.holed(r, inFlight)
		if len(rs) == 0 || rs[0].From != r.From {
			t.Fatalf("holed(%v, %v) = %v: does not start at the span", r, inFlight, rs)
		}
		end := rs[len(rs)-1].To
		asked := map[Tick]bool{}
		for i, x := range rs {
			if x.From > x.To || x.To > r.To || (i > 0 && x.From <= rs[i-1].To) {
				t.Fatalf("holed(%v, %v) = %v: range %v out of order or outside", r, inFlight, rs, x)
			}
			for tk := x.From; tk <= x.To; tk++ {
				asked[tk] = true
			}
		}
		for tk := r.From; tk <= end; tk++ {
			if asked[tk] == in[tk] {
				t.Fatalf("holed(%v, %v) = %v: tick %d asked %v, in flight %v", r, inFlight, rs, tk, asked[tk], in[tk])
			}
		}
		if len(inFlight) <= s.cfg.CatchupWindow && end != r.To && !in[r.To] {
			t.Fatalf("holed(%v, %v) = %v: ends at %d with at most CatchupWindow holes", r, inFlight, rs, end)
		}
		if len(inFlight) > s.cfg.CatchupWindow && end >= inFlight[s.cfg.CatchupWindow] {
			t.Fatalf("holed(%v, %v) = %v: past the hole after CatchupWindow", r, inFlight, rs)
		}
	})
}

// TestSHBCatchupCoversLiveWhileAnswersFlow: 50 subscribers back together
// fetch the backlog as two covers, whose answers come slowly, oldest tick
// first, for longer than a cover's life (40 ms): the second cover waits
// its turn while the first's answers flow, so it does not expire and no
// tick is nacked by itself or asked for twice (fails when only the cover
// holding an answered tick is renewed: the second expires and its ticks
// are nacked again).
func TestSHBCatchupCoversLiveWhileAnswersFlow(t *testing.T) {
	const subs, ticks = 50, 2000
	g := newCoverRig(t)
	g.backlog(subs, ticks, func(int) bool { return false })
	g.hold = true
	for i := range subs {
		g.resume(i, subs)
	}
	g.tick()
	if g.s.Stats.CatchupCovers != 2 {
		t.Fatalf("%d covers, want 2 (%v)", g.s.Stats.CatchupCovers, g.nacks)
	}
	lastTick := g.now
	for i := 0; i < len(g.held); i++ { // answers of later nacks are held too
		g.now += 40
		env := g.held[i]
		g.run(g.s.Step(g.now, env))
		if g.now-lastTick >= 5_000 {
			lastTick = g.now
			g.run(g.s.Tick(g.now))
		}
	}
	for i := range subs {
		g.complete(i, subs, ticks)
	}
	if g.s.Stats.CatchupCovers != 2 || g.s.Stats.CatchupNack != 0 || g.answered != ticks {
		t.Fatalf("%d covers, %d single ticks nacked, %d events answered for %d (nacks %v)",
			g.s.Stats.CatchupCovers, g.s.Stats.CatchupNack, g.answered, ticks, g.nacks)
	}
}

// TestSHBCatchupCoverGoneByWhileAway: 50 subscribers back together fetch
// a backlog of 2,000 ticks as covers; s00 leaves before their answers
// come, and is back, from CT 0, once they have gone by, with s01, which
// missed 1,000 later ticks. The answers come one every 10 ms (a loaded
// path), oldest nack first, and s01's are above the covers. s00's ticks
// lie in covers whose answer has passed: it must nack them itself and be
// complete before s01 is. Fails when a cover outlives its answer: s00
// then waits on the spent covers for as long as s01's answers (or any
// others) keep coming and renew them, which under churn is for ever.
func TestSHBCatchupCoverGoneByWhileAway(t *testing.T) {
	const subs, ticks, more = 50, 2000, 1000
	g := newCoverRig(t)
	g.backlog(subs, ticks, func(int) bool { return false })
	g.hold = true
	for i := range subs {
		g.resume(i, subs)
	}
	g.tick()
	if g.s.Stats.CatchupCovers == 0 {
		t.Fatalf("no cover for %d subscribers back together (%v)", subs, g.nacks)
	}
	if n := len(g.s.Covers()); n != g.s.Stats.CatchupCovers {
		t.Fatalf("%d live covers shown, %d sent", n, g.s.Stats.CatchupCovers)
	}
	g.step(Msg{Kind: MsgDisconnect, Sub: "s00", Session: 2}, "s00")
	g.release()
	if cs := g.s.Covers(); len(cs) != 0 {
		t.Fatalf("covers %v still live once their answers went by", cs)
	}
	g.step(Msg{Kind: MsgDisconnect, Sub: "s01", Session: 2}, "s01")
	for tk := Tick(ticks + 1); tk <= ticks+more; tk++ {
		e := match.MustEvent(match.Attr{Name: "g", Value: match.Int(int64(int(tk) % subs))})
		g.log[tk] = e
		g.step(Msg{Kind: MsgData, Pubend: "p", Tick: tk, Prev: tk - 1, Event: e}, "r")
	}
	g.hold = true
	for i, ct := range []Tick{0, ticks} {
		id := fmt.Sprintf("s%02d", i)
		f := match.MustParse(fmt.Sprintf("g == %d", i))
		g.step(Msg{Kind: MsgResume, Sub: id, Session: 3, Filter: f, HasCT: true, CT: CT{"p": ct}}, id)
	}
	g.tick()
	const want = (ticks + more) / subs // s00's and s01's ticks, each one in 50 (s01 got 40 before it left)
	var doneAt [2]Tick
	for i := 0; i < len(g.held); i++ { // answers of later nacks are held too
		g.now += 10_000
		g.run(g.s.Step(g.now, g.held[i]))
		g.run(g.s.Tick(g.now))
		for j := range doneAt {
			if id := fmt.Sprintf("s%02d", j); doneAt[j] == 0 && len(g.got[id]) >= want {
				doneAt[j] = g.now
			}
		}
	}
	g.complete(0, subs, ticks+more)
	g.complete(1, subs, ticks+more)
	if doneAt[0] == 0 || doneAt[1] == 0 || doneAt[0] > doneAt[1] {
		t.Fatalf("s00 complete at %d, s01 at %d: s00 waited on covers whose answer had gone by (%d covers, %d ticks nacked)",
			doneAt[0], doneAt[1], g.s.Stats.CatchupCovers, g.s.Stats.CatchupNack)
	}
}

// TestSHBCatchupFetchedKeptForLater: s07, behind among 19 up to date,
// nacks its 60 ticks one by one and leaves before the answers come; they
// arrive while it is away. Back, it finds them at hand (the SHB keeps what
// nacks fetched): it gets every event once, in order, with no nack of its
// own. Fails when answers nobody waits for are dropped: it nacks all 60
// again, every time it comes back.
func TestSHBCatchupFetchedKeptForLater(t *testing.T) {
	const subs, ticks = 20, 1200
	g := newCoverRigTail(t, 64)
	g.backlog(subs, ticks, func(i int) bool { return i != 7 })
	g.hold = true
	g.resume(7, subs)
	g.tick()
	nacked := g.s.Stats.CatchupNack
	if nacked == 0 || len(g.held) == 0 {
		t.Fatalf("s07 nacked %d ticks, %d answers held", nacked, len(g.held))
	}
	g.step(Msg{Kind: MsgDisconnect, Sub: "s07", Session: 2}, "s07")
	g.release()
	f := match.MustParse("g == 7")
	g.step(Msg{Kind: MsgResume, Sub: "s07", Session: 3, Filter: f, HasCT: true, CT: CT{"p": 0}}, "s07")
	g.tick()
	g.complete(7, subs, ticks)
	if n := g.s.Stats.CatchupNack - nacked; n != 0 {
		t.Fatalf("back, s07 nacked %d ticks again whose answers had come while it was away", n)
	}
}
