package durable

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// stepSHB steps the SHB and applies its Ready, returning the messages.
func stepSHB(t *testing.T, s *SHB, st Store, env Envelope) []Envelope {
	t.Helper()
	if err := s.Step(0, env); err != nil {
		t.Fatal(err)
	}
	rd := s.Ready()
	if err := st.Apply(rd.Writes, rd.Sync); err != nil {
		t.Fatal(err)
	}
	return rd.Msgs
}

// TestStaleFilteredSilenceIgnored checks the stamp rule: a filtered
// silence stamped before a subscription's install acknowledgement (here
// from an earlier router incarnation, in flight across the router's
// restart) may hide an event the new subscription matches, so the SHB
// ignores it and learns the ticks again by nack.
func TestStaleFilteredSilenceIgnored(t *testing.T) {
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}}, st)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Ready()
	inst := installOf(t, stepSHB(t, s, st, Envelope{From: "s1", To: "shb", Msg: Msg{Kind: MsgResume, Sub: "s1", Session: 1}}))
	out := stepSHB(t, s, st, Envelope{From: "r", To: "shb", Msg: ackOf(inst, CT{"p": 0},
		Stamp{Node: "r", Epoch: 2, Version: 1}, Stamp{Node: "top", Epoch: 5, Version: 9})})
	if len(out) != 1 || out[0].Msg.Kind != MsgStart || out[0].Msg.CT["p"] != 0 {
		t.Fatalf("registration: %v", out)
	}
	stale := Msg{Kind: MsgSilence, Pubend: "p", From: 1, To: 10, Filtered: true, Origin: "r", Epoch: 1, Version: 7}
	stepSHB(t, s, st, Envelope{From: "r", To: "shb", Msg: stale})
	if s.LD("p") != 0 || s.Stats.StaleIgnored != 1 {
		t.Fatalf("stale filtered silence accepted: LD=%d ignored=%d", s.LD("p"), s.Stats.StaleIgnored)
	}
	ev := match.MustEvent(match.Attr{Name: "k", Value: match.Int(1)})
	out = stepSHB(t, s, st, Envelope{From: "r", To: "shb", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: 5, Prev: 0, Event: ev}})
	if len(out) != 1 || out[0].Msg.Kind != MsgEvent || out[0].Msg.Tick != 5 {
		t.Fatalf("event at tick 5 not delivered: %v", out)
	}
	// Stamps of different routers are not compared: a silence filtered by
	// "top" is judged by top's stamp only.
	staleTop := Msg{Kind: MsgSilence, Pubend: "p", From: 6, To: 10, Filtered: true, Origin: "top", Epoch: 5, Version: 8}
	stepSHB(t, s, st, Envelope{From: "r", To: "shb", Msg: staleTop})
	if s.LD("p") != 5 || s.Stats.StaleIgnored != 2 {
		t.Fatalf("silence filtered by top before its stamp accepted: LD=%d ignored=%d", s.LD("p"), s.Stats.StaleIgnored)
	}
	fresh := Msg{Kind: MsgSilence, Pubend: "p", From: 6, To: 10, Filtered: true, Origin: "r", Epoch: 2, Version: 1}
	stepSHB(t, s, st, Envelope{From: "r", To: "shb", Msg: fresh})
	if s.LD("p") != 10 {
		t.Fatalf("filtered silence stamped at the install not accepted: LD=%d", s.LD("p"))
	}
	// The stamp survives a restart.
	s2, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}}, st)
	if err != nil {
		t.Fatal(err)
	}
	if s2.stamps["r"] != (Stamp{Node: "r", Epoch: 2, Version: 1}) || s2.stamps["top"].Version != 9 {
		t.Fatalf("stamps after restart: %v", s2.stamps)
	}
}

// TestSHBReportHoldsPendingCT: a subscriber back with its CT at an SHB
// that does not know it (reconnect anywhere, or back at an SHB that lost
// its disk) will hold release from that CT once registered; while its
// install waits for the acknowledgement, the SHB's release reports
// already stop at the CT, and they are stamped in order (a pubend takes
// the newest as it is, so the lower Tr counts).
func TestSHBReportHoldsPendingCT(t *testing.T) {
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}, ProgressHold: -1}, st)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Ready()
	stepSHB(t, s, st, Envelope{From: "r", To: "shb", Msg: Msg{Kind: MsgSilence, Pubend: "p", From: 1, To: 500}})
	reports := func(now Tick) []Msg {
		t.Helper()
		if err := s.Tick(now); err != nil {
			t.Fatal(err)
		}
		rd := s.Ready()
		if err := st.Apply(rd.Writes, rd.Sync); err != nil {
			t.Fatal(err)
		}
		var out []Msg
		for _, e := range rd.Msgs {
			if e.Msg.Kind == MsgRelease {
				out = append(out, e.Msg)
			}
		}
		return out
	}
	first := reports(100_000)
	if len(first) != 1 || first[0].Reports[0].Tr != 500 || first[0].Epoch == 0 {
		t.Fatalf("no subscriber: reports %v, want Tr 500, stamped", first)
	}
	stepSHB(t, s, st, Envelope{From: "s1", To: "shb", Msg: Msg{Kind: MsgResume, Sub: "s1", Session: 1,
		HasCT: true, CT: CT{"p": 120}}})
	next := reports(200_000)
	if len(next) != 1 || next[0].Reports[0].Tr != 120 {
		t.Fatalf("a registration from CT 120 waiting for its install: reports %v, want Tr 120", next)
	}
	a, b := first[0], next[0]
	if a.Epoch != b.Epoch || a.Version >= b.Version {
		t.Fatalf("stamps not in order: %d.%d then %d.%d", a.Epoch, a.Version, b.Epoch, b.Version)
	}
}

// installOf returns the one install among out.
func installOf(t *testing.T, out []Envelope) Msg {
	t.Helper()
	var ms []Msg
	for _, e := range out {
		if e.Msg.Kind == MsgInstall {
			ms = append(ms, e.Msg)
		}
	}
	if len(ms) != 1 {
		t.Fatalf("want one install, got %v", out)
	}
	return ms[0]
}

// ackInstall returns the acknowledgement a hop sends for the SHB's
// install of pending subscription id (it echoes the install's stamp), for
// tests that do not keep the SHB's output.
func ackInstall(s *SHB, id string, ct CT) Msg {
	return Msg{Kind: MsgInstallAck, Sub: id, CT: ct, Epoch: s.epoch, Version: s.pending[id].ver}
}

// TestSHBInstallAckOfItsOwnInstall checks that a pending subscription is
// registered only by the acknowledgement of one of its own installs: one
// still in flight for the install of the SHB's previous incarnation, or a
// duplicate of an earlier registration's of the id, may have been made
// before a hop held the filter as it is now, so it is ignored.
func TestSHBInstallAckOfItsOwnInstall(t *testing.T) {
	st := newMapStore()
	cfg := SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}}
	s, err := NewSHB(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Ready()
	f := match.MustParse(`k < 4`)
	resume := func(s *SHB, session uint64) Msg {
		t.Helper()
		return installOf(t, stepSHB(t, s, st, Envelope{From: "s1", To: "shb", Msg: Msg{Kind: MsgResume, Sub: "s1", Filter: f, Session: session}}))
	}
	ack := func(s *SHB, inst Msg) []Envelope {
		t.Helper()
		return stepSHB(t, s, st, Envelope{From: "r", To: "shb", Msg: ackOf(inst, CT{"p": 0})})
	}
	before := resume(s, 1)
	// The SHB restarts before the acknowledgement; the subscriber resumes.
	if s, err = NewSHB(cfg, st); err != nil {
		t.Fatal(err)
	}
	_ = s.Ready()
	now := resume(s, 2)
	if now.Epoch == before.Epoch {
		t.Fatalf("the restarted SHB installs in epoch %d again", now.Epoch)
	}
	if out := ack(s, before); len(out) != 0 || s.subs["s1"] != nil {
		t.Fatalf("the previous incarnation's acknowledgement registered s1: %v", out)
	}
	if out := ack(s, now); len(out) != 1 || out[0].Msg.Kind != MsgStart || s.subs["s1"] == nil {
		t.Fatalf("its own install's acknowledgement: got %v, want the session's start", out)
	}
	// Unsubscribed and subscribed again: a duplicate of the first
	// registration's acknowledgement does not register the second.
	stepSHB(t, s, st, Envelope{From: "s1", To: "shb", Msg: Msg{Kind: MsgUnsubscribe, Sub: "s1"}})
	again := resume(s, 3)
	if out := ack(s, now); len(out) != 0 || s.subs["s1"] != nil {
		t.Fatalf("the earlier registration's acknowledgement registered s1 again: %v", out)
	}
	if out := ack(s, again); len(out) != 1 || out[0].Msg.Kind != MsgStart || s.subs["s1"] == nil {
		t.Fatalf("its own install's acknowledgement: got %v, want the session's start", out)
	}
}

// TestSHBUnsubscribeWhilePending checks that an unsubscribe before the
// install acknowledgement withdraws the subscription: the filter is
// uninstalled, and the acknowledgement that comes afterwards registers
// nothing (a registration nobody wants would hold release for ever).
func TestSHBUnsubscribeWhilePending(t *testing.T) {
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p"}}, st)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Ready()
	inst := installOf(t, stepSHB(t, s, st, Envelope{From: "s1", To: "shb", Msg: Msg{Kind: MsgResume, Sub: "s1", Filter: match.MustParse(`k < 4`), Session: 1}}))
	out := stepSHB(t, s, st, Envelope{From: "s1", To: "shb", Msg: Msg{Kind: MsgUnsubscribe, Sub: "s1"}})
	if len(out) != 1 || out[0].To != "r" || out[0].Msg.Kind != MsgUninstall || !older(inst.Epoch, inst.Version, out[0].Msg.Epoch, out[0].Msg.Version) {
		t.Fatalf("unsubscribe while pending: got %v, want an uninstall newer than %v", out, inst)
	}
	if out := stepSHB(t, s, st, Envelope{From: "r", To: "shb", Msg: ackOf(inst, CT{"p": 0})}); len(out) != 0 || s.subs["s1"] != nil {
		t.Fatalf("the withdrawn subscription was registered: %v", out)
	}
}
