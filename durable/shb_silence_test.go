package durable

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestSHBIdleSilencesOnlyToIdle: two pubends p and q whose streams move
// every millisecond, s1 matching an event of p every half period, s2
// matching nothing. Over 50 periods s1 gets no silence on p (its CT moves
// with the events) but one per period on q, where it matched nothing, and
// s2 gets one per period on each; so every session's CT still keeps up
// with LD, on every pubend, within two periods.
func TestSHBIdleSilencesOnlyToIdle(t *testing.T) {
	const period = Tick(20_000)
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p", "q"}, ReportInterval: 5_000, IdleSilence: period, ProgressHold: -1}, st)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Ready()
	var out []Envelope
	step := func(now Tick, env *Envelope) {
		t.Helper()
		var err error
		if env != nil {
			err = s.Step(now, *env)
		} else {
			err = s.Tick(now)
		}
		if err != nil {
			t.Fatal(err)
		}
		rd := s.Ready()
		if err := st.Apply(rd.Writes, rd.Sync); err != nil {
			t.Fatal(err)
		}
		out = append(out, rd.Msgs...)
	}
	for i, f := range []string{`k == 1`, `k == 2`} {
		id := []string{"s1", "s2"}[i]
		step(1, &Envelope{From: "c" + id, To: "shb", Msg: Msg{Kind: MsgResume, Sub: id, Session: uint64(i + 1), Filter: match.MustParse(f)}})
		step(1, &Envelope{From: "r", To: "shb", Msg: ackInstall(s, id, CT{"p": 0, "q": 0})})
	}
	out = nil
	ev := match.MustEvent(match.Attr{Name: "k", Value: match.Int(1)})
	const start, periods = Tick(1_000), 50
	type key struct{ node, pubend string }
	silences, events := map[key]int{}, map[key]int{}
	last := map[key]Tick{}
	lagMax := map[key]Tick{}
	for now := start; now < start+periods*period; now += 1_000 {
		for _, p := range []string{"p", "q"} {
			m := Msg{Kind: MsgSilence, Pubend: p, From: now - 999, To: now}
			if p == "p" && now%(period/2) == 0 {
				m = Msg{Kind: MsgData, Pubend: p, Tick: now, Prev: now - 1_000, Event: ev}
			}
			step(now, &Envelope{From: "r", To: "shb", Msg: m})
		}
		step(now, nil)
		for _, e := range out {
			k := key{e.To, e.Msg.Pubend}
			switch e.Msg.Kind {
			case MsgSubSilence:
				silences[k]++
			case MsgEvent:
				events[k]++
			default:
				continue
			}
			last[k] = e.Msg.Tick
		}
		out = out[:0]
		if now < start+2*period {
			continue
		}
		for _, n := range []string{"cs1", "cs2"} {
			for _, p := range []string{"p", "q"} {
				k := key{n, p}
				lagMax[k] = max(lagMax[k], s.LD(p)-last[k])
			}
		}
	}
	if events[key{"cs1", "p"}] != 2*periods || len(events) != 1 {
		t.Fatalf("events %v: want %d to cs1 on p, none elsewhere", events, 2*periods)
	}
	if n := silences[key{"cs1", "p"}]; n != 0 {
		t.Errorf("cs1 on p: %d silences while it was sent an event every half period, want 0", n)
	}
	for _, k := range []key{{"cs1", "q"}, {"cs2", "p"}, {"cs2", "q"}} {
		if n := silences[k]; n < periods-2 || n > periods+1 {
			t.Errorf("%v: %d silences in %d periods of nothing matched, want one a period", k, n, periods)
		}
	}
	for k, lag := range lagMax {
		if lag > 2*period {
			t.Errorf("%v: CT up to %d µs behind LD, want at most two periods (%d)", k, lag, 2*period)
		}
	}
}
