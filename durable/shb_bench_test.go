package durable

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// BenchmarkSHBConstream measures one SHB's cost per D tick on its
// constream with subs connected, up-to-date subscribers (each matching a
// tenth of the events) and none catching up: the istream merge, the
// remote-phase offer (learnRemote), matching, the PFS record and the
// deliveries. Subscribers acknowledge every 1,024 ticks, outside the
// timing.
func BenchmarkSHBConstream(b *testing.B) {
	for _, subs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) {
			st := newMapStore()
			s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}}, st)
			if err != nil {
				b.Fatal(err)
			}
			step := func(m Msg, from string) {
				if err := s.Step(0, Envelope{From: from, To: "shb", Msg: m}); err != nil {
					b.Fatal(err)
				}
				rd := s.Ready()
				if err := st.Apply(rd.Writes, rd.Sync); err != nil {
					b.Fatal(err)
				}
			}
			for i := range subs {
				id := fmt.Sprintf("s%04d", i)
				f := match.MustParse(fmt.Sprintf("g == %d", i%10))
				step(Msg{Kind: MsgResume, Sub: id, Session: 1, Filter: f}, id)
				step(ackInstall(s, id, CT{"p": 0}), "r")
			}
			events := make([]match.Event, 10)
			for g := range events {
				events[g] = match.MustEvent(match.Attr{Name: "g", Value: match.Int(int64(g))})
			}
			b.ResetTimer()
			for i := range b.N {
				t := Tick(i + 1)
				step(Msg{Kind: MsgData, Pubend: "p", Tick: t, Prev: t - 1, Event: events[i%10]}, "r")
				if i%1024 == 1023 {
					b.StopTimer()
					for j := range subs {
						id := fmt.Sprintf("s%04d", j)
						step(Msg{Kind: MsgAck, Sub: id, CT: CT{"p": t}}, id)
					}
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkSHBCatchupInput measures the SHB's cost of one input that
// changes one catch-up session (an acknowledgement from its subscriber)
// while subs sessions catch up, each with its ticks nacked and not
// answered: the work per input must not grow with the sessions that did
// not change. stepAll=true is the reference that steps every catching
// session after every input (as progress did before).
func BenchmarkSHBCatchupInput(b *testing.B) {
	for _, all := range []bool{false, true} {
		for _, subs := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("stepAll=%v/subs=%d", all, subs), func(b *testing.B) {
				s, step := catchingSHB(b, subs, 3*subs)
				s.stepAll = all
				b.ResetTimer()
				for range b.N {
					step(Msg{Kind: MsgAck, Sub: "s0000", CT: CT{"p": 0}}, "s0000")
				}
			})
		}
	}
}
