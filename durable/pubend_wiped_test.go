package durable

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestPubendHoldsForWipedSHB: a member SHB whose store changes (a larger
// Born: back with an empty disk) and whose new store reports everything
// released does not move release past what its previous store reported
// until WipeGrace has passed since; a delayed report of the previous store
// changes nothing; the hold survives a restart of the pubend; a member
// whose previous store only ever installed holds release where it stood.
func TestPubendHoldsForWipedSHB(t *testing.T) {
	st := newMapStore()
	cfg := PubendConfig{ID: "p", Node: "phb", Downstream: []string{"r"}, SHBs: []string{"s"}, WipeGrace: 1_000_000}
	p, err := NewPubend(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	now := Tick(1_000_000)
	flush := func() {
		t.Helper()
		rd := p.Ready()
		if err := st.Apply(rd.Writes, true); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		p.Step(now, Envelope{From: "pub", Msg: Msg{Kind: MsgPublish, Publisher: "a", Seq: uint64(i + 1),
			Event: match.MustEvent(match.Attr{Name: "i", Value: match.Int(int64(i))})}})
		now += 10
	}
	flush()
	p.Tick(now)
	flush()
	last := p.LastAnnounced()
	report := func(tr Tick, born Tick) {
		t.Helper()
		now += 10
		p.Step(now, Envelope{From: "r", Msg: Msg{Kind: MsgRelease, Pubend: "p", Born: born,
			Reports: []Report{{SHB: "s", Tr: tr, Td: tr}}}})
		flush()
	}
	report(1_000_200, 10)
	if p.Lost() != 1_000_200 {
		t.Fatalf("first store reported 1000200: released %d", p.Lost())
	}
	report(last, 20) // the same SHB, an empty disk: nothing registered yet
	if p.Lost() != 1_000_200 {
		t.Fatalf("wiped SHB's new store: released %d, want held at 1000200", p.Lost())
	}
	if w := p.Wiped(); w["s"] != 1_000_200 {
		t.Fatalf("Wiped() = %v", w)
	}
	report(last, 10) // a delayed report of the first store
	p.Tick(now)
	flush()
	if p.Lost() != 1_000_200 {
		t.Fatalf("after a stale report: released %d", p.Lost())
	}
	p, err = NewPubend(cfg, st) // the hold is on disk
	if err != nil {
		t.Fatal(err)
	}
	report(last, 20)
	if p.Lost() != 1_000_200 {
		t.Fatalf("after a pubend restart: released %d, want held", p.Lost())
	}
	now += cfg.WipeGrace
	p.Tick(now)
	flush()
	if p.Lost() != last || len(p.Wiped()) != 0 {
		t.Fatalf("after the grace: released %d (want %d), holds %v", p.Lost(), last, p.Wiped())
	}
	if p.Stats.Wipes != 0 { // counted by the incarnation before the restart
		t.Fatalf("wipes counted after restart: %d", p.Stats.Wipes)
	}

	// A member whose store installed and never reported, then is wiped:
	// release stays where it stood (nothing moved without a report).
	st2 := newMapStore()
	cfg2 := PubendConfig{ID: "q", Node: "phb", Downstream: []string{"r"}, SHBs: []string{"s", "t"}, WipeGrace: 1_000_000}
	q, err := NewPubend(cfg2, st2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		q.Step(now, Envelope{From: "pub", Msg: Msg{Kind: MsgPublish, Publisher: "a", Seq: uint64(i + 1),
			Event: match.MustEvent(match.Attr{Name: "i", Value: match.Int(int64(i))})}})
		now += 10
	}
	if err := st2.Apply(q.Ready().Writes, true); err != nil {
		t.Fatal(err)
	}
	q.Tick(now)
	if err := st2.Apply(q.Ready().Writes, true); err != nil {
		t.Fatal(err)
	}
	if q.LastAnnounced() == 0 {
		t.Fatal("nothing announced")
	}
	q.Step(now, Envelope{From: "r", Msg: Msg{Kind: MsgInstall, Sub: "x", Origin: "t", Born: 5, Filter: match.MustParse(`*`)}})
	q.Step(now, Envelope{From: "r", Msg: Msg{Kind: MsgRelease, Pubend: "q", Reports: []Report{{SHB: "s", Tr: now, Td: now}}}})
	q.Step(now, Envelope{From: "r", Msg: Msg{Kind: MsgRelease, Pubend: "q", Born: 9, Reports: []Report{{SHB: "t", Tr: now, Td: now}}}})
	q.Tick(now + 1)
	if q.Lost() != 0 || q.Wiped()["t"] != 0 || len(q.Wiped()) != 1 {
		t.Fatalf("wiped before it reported: released %d, holds %v", q.Lost(), q.Wiped())
	}
}
