package durable

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// restartRig runs the outage shape of bench durable --restart-shb on an
// env (PHB - r - SHB): subscribers with disjoint filters, the SHB down
// while the backlog is published, then back with its subscribers
// returning while its istream recovers the outage. Time advances by step
// between rounds; each round fires every timer and delivers at most
// perRound messages (a link of finite capacity), so the recovery's
// answers take many rounds and the subscribers' returns fall inside it.
type restartRig struct {
	e        *env
	subs     int
	got      map[string][]Tick
	step     Tick
	perRound int
	answered int // events the PHB sent (answers to nacks), as delivered
}

func newRestartRig(t *testing.T, subs int) *restartRig {
	e := newEnv(t, envOpts{routers: 1, idleSilence: 1, tailSize: 64})
	return &restartRig{e: e, subs: subs, got: map[string][]Tick{}, step: 1000, perRound: 3000}
}

func (g *restartRig) id(i int) string { return fmt.Sprintf("s%d", i) }

func (g *restartRig) filter(i int) match.Filter { return match.MustParse(fmt.Sprintf("g == %d", i)) }

// subscribe registers every subscriber and runs until the SHB is quiet.
func (g *restartRig) subscribe() {
	for i := range g.subs {
		g.e.queue = append(g.e.queue, Envelope{From: g.id(i), To: "shb", Msg: Msg{Kind: MsgResume, Sub: g.id(i), Session: 1, Filter: g.filter(i)}})
	}
	g.rounds(5, nil)
}

// publish logs n events, event k with g = k mod subs, with the SHB down.
func (g *restartRig) publish(n int) {
	for k := 1; k <= n; k++ {
		ev := match.MustEvent(match.Attr{Name: "g", Value: match.Int(int64(k % g.subs))})
		g.e.now++
		g.e.queue = append(g.e.queue, Envelope{From: "pub", To: "phb", Msg: Msg{Kind: MsgPublish, Publisher: "pub", Seq: uint64(k), Event: ev}})
		if k%1000 == 0 {
			g.e.deliver()
		}
	}
	g.e.deliver()
}

// rounds runs n rounds, or until done reports true.
func (g *restartRig) rounds(n int, done func() bool) int {
	for i := range n {
		if done != nil && done() {
			return i
		}
		g.e.now += g.step
		g.e.tick()
		var b strings.Builder
		for k := 0; k < g.perRound && len(g.e.queue) > 0; k++ {
			env := g.e.queue[0]
			if env.Msg.Kind == MsgEvent && strings.HasPrefix(env.To, "s") && g.e.shbs[env.To] == nil {
				g.got[env.To] = append(g.got[env.To], env.Msg.Tick)
				g.e.queue = append(g.e.queue, Envelope{From: env.To, To: env.From, Msg: Msg{Kind: MsgAck, Sub: env.To, CT: CT{"p": env.Msg.Tick}}})
			}
			if env.From == "phb" && env.Msg.Kind == MsgData {
				g.answered++
			}
			g.e.deliverOne(&b)
		}
	}
	return n
}

// TestSHBRestartSubscribersBackDuringRecovery: ten subscribers with
// disjoint filters return to an SHB restarted after an outage (a tail of
// 64, the router's cache of 4,096 runs), before, during and after the
// istream's recovery, on a path where the link is the bottleneck (3,000
// messages a round, 20,000 events) and on one where the PHB is (it
// answers 2,048 events a step; 30,000 events). Those back once the
// recovery has passed their events fetch them again, and their nacks are
// answered at once: each delivers all its events in order within 40
// rounds (a cover's life) of returning, whenever it returns. The
// subscribers back mid-recovery took 63-70 rounds when the router held
// their nacks behind its outstanding recovery nack for answers that had
// gone by (Router.answered), and 50 when the PHB left their ticks out as
// answered lately (Msg.Refetch); 11 and 25 now.
func TestSHBRestartSubscribersBackDuringRecovery(t *testing.T) {
	const subs, bound = 10, 40
	for _, c := range []struct{ perRound, events, wait int }{
		{3000, 20000, 0}, {3000, 20000, 10}, {3000, 20000, 25},
		{20000, 30000, 0}, {20000, 30000, 10}, {20000, 30000, 25},
	} {
		g := newRestartRig(t, subs)
		g.perRound = c.perRound
		g.subscribe()
		g.e.down["shb"] = true
		g.publish(c.events)
		delete(g.e.down, "shb")
		g.e.bootSHB("shb")
		g.rounds(c.wait, nil)
		ld := g.e.shbs["shb"].LD("p")
		for i := range subs {
			g.e.queue = append(g.e.queue, Envelope{From: g.id(i), To: "shb", Msg: Msg{Kind: MsgResume, Sub: g.id(i), Session: 2, Filter: g.filter(i)}})
		}
		n := g.rounds(bound, func() bool {
			total := 0
			for _, ts := range g.got {
				total += len(ts)
			}
			return total >= c.events
		})
		t.Logf("%d messages a round, %d events, back after %d rounds (LD %d): complete in %d rounds", c.perRound, c.events, c.wait, ld, n)
		for i := range subs {
			got := g.got[g.id(i)]
			if len(got) != c.events/subs || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Fatalf("%d messages a round, back after %d rounds (LD %d): %s got %d events in %d rounds, want %d once each in order within %d",
					c.perRound, c.wait, ld, g.id(i), len(got), n, c.events/subs, bound)
			}
		}
	}
}

// TestSHBCoversBackOffOnSlowPath: the restart of
// TestSHBRestartSubscribersBackDuringRecovery (10 subscribers back 10
// rounds into the recovery of 20,000 events) on a path whose round trip
// is longer than a cover's life: a round lasts 100 ms (a driver that
// holds its inputs and outputs that long) and carries at most 1,500 or
// 3,000 messages. Every subscriber gets its events once each, in order,
// and the covers back off while no answer comes (coverLifeFor): with a
// fixed 40 ms life each expired cover was asked for again whole every
// round, the pubend answered every one in full, and the repeats outgrew
// the answers (1,500 a round: 170 covers, 119,252 events answered, 217
// rounds; 3,000: 27, 58,966 and 36).
func TestSHBCoversBackOffOnSlowPath(t *testing.T) {
	const subs, events = 10, 20000
	for _, c := range []struct{ perRound, covers, answered, rounds int }{
		{1500, 60, 5 * events, 160}, {3000, 20, 5 * events / 2, 33},
	} {
		g := newRestartRig(t, subs)
		g.perRound = c.perRound
		g.subscribe()
		g.e.down["shb"] = true
		g.publish(events)
		delete(g.e.down, "shb")
		g.e.bootSHB("shb")
		g.step = 100_000
		g.rounds(10, nil)
		for i := range subs {
			g.e.queue = append(g.e.queue, Envelope{From: g.id(i), To: "shb", Msg: Msg{Kind: MsgResume, Sub: g.id(i), Session: 2, Filter: g.filter(i)}})
		}
		n := g.rounds(2*c.rounds, func() bool {
			total := 0
			for _, ts := range g.got {
				total += len(ts)
			}
			return total >= events
		})
		st := g.e.shbs["shb"].Stats
		t.Logf("%d messages a round of 100 ms: complete in %d rounds, %d covers, %d catch-up nacks, %d events answered",
			c.perRound, n, st.CatchupCovers, st.CatchupNack, g.answered)
		for i := range subs {
			got := g.got[g.id(i)]
			if len(got) != events/subs || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Fatalf("%d messages a round: %s got %d events in %d rounds, want %d once each in order",
					c.perRound, g.id(i), len(got), n, events/subs)
			}
		}
		if st.CatchupCovers > c.covers || g.answered > c.answered || n > c.rounds {
			t.Fatalf("%d messages a round: %d covers, %d events answered, %d rounds; want at most %d, %d and %d",
				c.perRound, st.CatchupCovers, g.answered, n, c.covers, c.answered, c.rounds)
		}
	}
}
