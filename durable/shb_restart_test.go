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
