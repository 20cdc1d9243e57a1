package durable

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestRouterMergedSilencesSayTheSame: a router that widens filtered
// silences (extendFiltered) tells every link, tick by tick and in the same
// order, what a router sending one filtered silence per D tick tells it,
// stamps included, through data, plain silences, filter changes and
// Readies taken at any point; and with fewer messages.
func TestRouterMergedSilencesSayTheSame(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		merged, ref := newMergeRouter(t, false), newMergeRouter(t, true)
		var got, want []Envelope
		last := Tick(0)
		syms := []string{"IBM", "SUN", "HP"}
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			var env Envelope
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				got, want = append(got, merged.Ready().Msgs...), append(want, ref.Ready().Msgs...)
				continue
			case 1:
				to := last + Tick(rapid.IntRange(1, 3).Draw(t, "len"))
				env = Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgSilence, Pubend: "p", From: last + 1, To: to}}
				last = to
			case 2:
				sym := rapid.SampledFrom(syms).Draw(t, "filter")
				env = filtersFor("b", 2, sym)
			default:
				tick := last + Tick(rapid.IntRange(1, 3).Draw(t, "gap"))
				ev := match.MustEvent(match.Attr{Name: "sym", Value: match.Str(rapid.SampledFrom(syms).Draw(t, "sym"))})
				env = Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: tick, Prev: last, Event: ev}}
				last = tick
			}
			for _, r := range []*Router{merged, ref} {
				if err := r.Step(0, env); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, want = append(got, merged.Ready().Msgs...), append(want, ref.Ready().Msgs...)
		for _, link := range []string{"a", "b"} {
			g, w := perTick(got, link), perTick(want, link)
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Fatalf("link %s:\nmerged    %v\nreference %v", link, g, w)
			}
		}
		if len(got) > len(want) || len(want)-len(got) != merged.Stats.SilencesMerged {
			t.Fatalf("%d messages against %d, %d merges", len(got), len(want), merged.Stats.SilencesMerged)
		}
	})
}

// TestRouterOneSilencePerReady: a link no event matches gets one
// filtered silence for the events of one Ready, and the next Ready's
// start a new one.
func TestRouterOneSilencePerReady(t *testing.T) {
	r := newMergeRouter(t, false)
	ibm := match.MustEvent(match.Attr{Name: "sym", Value: match.Str("IBM")})
	step := func(tick Tick) {
		if err := r.Step(0, Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: tick, Prev: tick - 1, Event: ibm}}); err != nil {
			t.Fatal(err)
		}
	}
	for tick := Tick(1); tick <= 100; tick++ {
		step(tick)
	}
	step(101) // not yet in the first Ready: below
	out := r.Ready().Msgs
	var toB []string
	for _, e := range out {
		if e.To == "b" {
			toB = append(toB, e.Msg.String())
		}
	}
	if len(out) != 102 || fmt.Sprint(toB) != "[silence p [1,101] filtered by r v=1.1]" {
		t.Fatalf("%d messages; to b: %q", len(out), toB)
	}
	step(102)
	if out := r.Ready().Msgs; len(out) != 2 || out[1].Msg.String() != "silence p [102,102] filtered by r v=1.1" {
		t.Fatalf("next Ready: %v", out)
	}
}

// newMergeRouter is a router between pubend p's PHB and links a (wanting
// IBM) and b (wanting SUN), both filter sets complete; noMerge makes it
// the reference.
func newMergeRouter(t interface{ Fatal(...any) }, noMerge bool) *Router {
	r, err := NewRouter(RouterConfig{Node: "r", Upstream: map[string]string{"p": "phb"},
		Downstream: []string{"a", "b"}, Incarnation: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.noMerge = noMerge
	for _, env := range []Envelope{filtersFor("a", 1, "IBM"), filtersFor("b", 1, "SUN")} {
		if err := r.Step(0, env); err != nil {
			t.Fatal(err)
		}
	}
	r.Ready()
	return r
}

// filtersFor is link's full filter set: one subscription to sym.
func filtersFor(link string, nonce uint64, sym string) Envelope {
	f, err := match.Parse(fmt.Sprintf("sym == %q", sym))
	if err != nil {
		panic(err)
	}
	return Envelope{From: link, To: "r", Msg: Msg{Kind: MsgFilters, Nonce: 1, Epoch: 1, Version: nonce,
		Subs: []SubFilter{{Sub: "s-" + link, Filter: f}}}}
}

// perTick expands the knowledge sent to link, in the order sent, into one
// entry per tick: d (data), i (silence a data message implies), s (plain
// silence) or the filtered silence's stamp.
func perTick(out []Envelope, link string) []string {
	var ticks []string
	for _, e := range out {
		m := e.Msg
		if e.To != link {
			continue
		}
		switch {
		case m.Kind == MsgData:
			for t := m.Prev + 1; t < m.Tick; t++ {
				ticks = append(ticks, fmt.Sprintf("%d:i", t))
			}
			ticks = append(ticks, fmt.Sprintf("%d:d", m.Tick))
		case m.Kind == MsgSilence && m.Filtered:
			for t := m.From; t <= m.To; t++ {
				ticks = append(ticks, fmt.Sprintf("%d:f %s %d.%d", t, m.Origin, m.Epoch, m.Version))
			}
		case m.Kind == MsgSilence:
			for t := m.From; t <= m.To; t++ {
				ticks = append(ticks, fmt.Sprintf("%d:s", t))
			}
		default:
			ticks = append(ticks, m.String())
		}
	}
	return ticks
}
