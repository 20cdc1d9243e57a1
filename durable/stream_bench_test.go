package durable

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// BenchmarkStreamFillBelowHole: the istream of an SHB back from a long
// outage (the issue's --restart-shb shape): the newest 4,096 runs are in,
// the bottom tick is still Q, and the 20,000 D ticks between arrive in
// order. One op is the whole fill.
func BenchmarkStreamFillBelowHole(b *testing.B) {
	const fill, top = 20_000, 4096
	e := match.MustEvent(match.Attr{Name: "g", Value: match.Int(1)})
	for b.Loop() {
		s := NewStream(0)
		for t := Tick(2*fill + 2); t < 2*fill+2+2*top; t += 2 {
			s.AddData(t, e)
		}
		for t := Tick(2); t < 2*fill+2; t += 2 {
			s.AddData(t, e)
			s.AddSilence(t+1, t+1)
		}
		if s.DoubtHorizon() != 0 {
			b.Fatal("the bottom tick is Q: no horizon")
		}
	}
}

// BenchmarkStreamFillBelowHoleLive is BenchmarkStreamFillBelowHole while
// publishing goes on: after each tick of the fill, a new D tick arrives at
// the top, so the stream changes at two places in turn. One op is the
// whole fill.
func BenchmarkStreamFillBelowHoleLive(b *testing.B) {
	const fill, top = 20_000, 4096
	e := match.MustEvent(match.Attr{Name: "g", Value: match.Int(1)})
	for b.Loop() {
		s := NewStream(0)
		live := Tick(2*fill + 2)
		for ; live < 2*fill+2+2*top; live += 2 {
			s.AddData(live, e)
		}
		for t := Tick(2); t < 2*fill+2; t += 2 {
			s.AddData(t, e)
			s.AddSilence(t+1, t+1)
			s.AddData(live, e)
			live += 2
		}
		if s.DoubtHorizon() != 0 {
			b.Fatal("the bottom tick is Q: no horizon")
		}
	}
}
