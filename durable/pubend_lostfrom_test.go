package durable

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestPubendLostFrom: the L prefix carries where its silent end starts
// (MsgLost.From): one past the last tick logged at or below it, read from
// memory for ticks this incarnation logged and from the log for those an
// earlier one did; a release that passes no logged tick keeps it; a store
// that never logged anything is silent from tick 1.
func TestPubendLostFrom(t *testing.T) {
	st := newMapStore()
	cfg := PubendConfig{ID: "p", Node: "phb", Downstream: []string{"r"}, SHBs: []string{"s"}}
	p, err := NewPubend(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	now := Tick(1_000_000)
	flush := func() []Msg {
		t.Helper()
		rd := p.Ready()
		if err := st.Apply(rd.Writes, true); err != nil {
			t.Fatal(err)
		}
		var lost []Msg
		for _, e := range rd.Msgs {
			if e.Msg.Kind == MsgLost {
				lost = append(lost, e.Msg)
			}
		}
		return lost
	}
	seq := uint64(0)
	publish := func(n int) []Tick {
		t.Helper()
		var ticks []Tick
		for range n {
			seq++
			p.Step(now, Envelope{From: "pub", Msg: Msg{Kind: MsgPublish, Publisher: "a", Seq: seq,
				Event: match.MustEvent(match.Attr{Name: "i", Value: match.Int(int64(seq))})}})
			ticks = append(ticks, p.logged[len(p.logged)-1])
			now += 10
		}
		flush()
		return ticks
	}
	release := func(tr Tick) Msg {
		t.Helper()
		now += 10
		p.Step(now, Envelope{From: "r", Msg: Msg{Kind: MsgRelease, Pubend: "p",
			Reports: []Report{{SHB: "s", Tr: tr, Td: tr}}}})
		lost := flush()
		if len(lost) != 1 || lost[0].Tick != tr {
			t.Fatalf("release to %d: lost messages %v", tr, lost)
		}
		return lost[0]
	}
	silence := func() Tick {
		now += 200_000
		p.Tick(now)
		flush()
		return p.LastAnnounced()
	}
	silence()
	if m := release(silence()); m.From != 1 {
		t.Fatalf("nothing logged: lost %v, want silent from 1", m)
	}
	ticks := publish(5)
	if m := release(ticks[2]); m.From != ticks[2]+1 {
		t.Fatalf("released to the third event: lost %v, want silent from %d", m, ticks[2]+1)
	}
	top := silence()
	if m := release(top); m.From != ticks[4]+1 {
		t.Fatalf("released past every event: lost %v, want silent from %d", m, ticks[4]+1)
	}
	if m := release(silence()); m.From != ticks[4]+1 {
		t.Fatalf("a release of silence only: lost %v, want still silent from %d", m, ticks[4]+1)
	}
	// A restart: the ticks logged before it are found in the log.
	more := publish(3)
	p, err = NewPubend(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.logged) != 0 {
		t.Fatalf("a recovered pubend holds logged ticks %v", p.logged)
	}
	if m := release(more[1]); m.From != more[1]+1 {
		t.Fatalf("after a restart, released to an earlier incarnation's event: lost %v, want silent from %d", m, more[1]+1)
	}
	if lf := p.lostMsg().From; lf != more[1]+1 {
		t.Fatalf("lostMsg From %d", lf)
	}
	p, err = NewPubend(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	if m := p.lostMsg(); m.From != more[1]+1 || m.Tick != more[1] {
		t.Fatalf("recovered lost %v, want silent from %d", m, more[1]+1)
	}
}

// TestPubendReportStamps: a stamped release report newer than the SHB's
// last is taken as it is, also when its Tr is lower (a subscriber
// registered there with a lower CT); an older or repeated stamp changes
// nothing; unstamped reports merge by their maximum; a new store of the
// SHB (a larger Born) counts its stamps afresh; the stamp survives a
// restart of the pubend once written (nothing held back here).
func TestPubendReportStamps(t *testing.T) {
	st := newMapStore()
	cfg := PubendConfig{ID: "p", Node: "phb", Downstream: []string{"r"}, SHBs: []string{"s"}, ProgressHold: -1}
	p, err := NewPubend(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	now := Tick(1_000_000)
	report := func(tr Tick, epoch, version uint64, born Tick) {
		t.Helper()
		now += 10
		if err := p.Step(now, Envelope{From: "r", Msg: Msg{Kind: MsgRelease, Pubend: "p", Born: born,
			Epoch: epoch, Version: version, Reports: []Report{{SHB: "s", Tr: tr, Td: tr}}}}); err != nil {
			t.Fatal(err)
		}
		if err := st.Apply(p.Ready().Writes, true); err != nil {
			t.Fatal(err)
		}
	}
	want := func(tr Tick, what string) {
		t.Helper()
		if got := p.Reports()["s"].Tr; got != tr {
			t.Fatalf("%s: Tr %d, want %d", what, got, tr)
		}
	}
	report(500, 0, 0, 0)
	report(400, 0, 0, 0)
	want(500, "unstamped reports merge by their maximum")
	report(300, 1, 1, 0)
	want(300, "a first stamped report is taken as it is")
	report(900, 1, 1, 0)
	want(300, "a repeated stamp")
	report(200, 1, 3, 0)
	report(800, 1, 2, 0)
	want(200, "a delayed older report")
	report(250, 2, 1, 0)
	want(250, "a new incarnation's first report")
	p, err = NewPubend(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	report(900, 1, 9, 0)
	want(250, "after a pubend restart, an older incarnation's report")
	report(100, 1, 1, 10)
	report(50, 1, 1, 20)
	want(50, "a new store (larger Born) with a stamp its old store had used")
}
