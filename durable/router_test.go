package durable

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

func stepRouter(t *testing.T, r *Router, now Tick, env Envelope) []Envelope {
	t.Helper()
	if err := r.Step(now, env); err != nil {
		t.Fatal(err)
	}
	return r.Ready().Msgs
}

// TestRouterConsolidatesNacks checks that nacks for the same ticks from two
// SHBs become one upstream nack, that the answer reaches both, filtered per
// link, and that a later nack is answered from the cache.
func TestRouterConsolidatesNacks(t *testing.T) {
	r, err := NewRouter(RouterConfig{Node: "r", Upstream: map[string]string{"p": "phb"},
		Downstream: []string{"shb1", "shb2"}, Incarnation: 1})
	if err != nil {
		t.Fatal(err)
	}
	ibm, _ := match.Parse(`sym == "IBM"`)
	// shb1 wants IBM; shb2 has no subscription. Both filter sets complete.
	stepRouter(t, r, 0, Envelope{From: "shb1", To: "r", Msg: Msg{Kind: MsgFilters, Nonce: 1, Epoch: 1,
		Subs: []SubFilter{{Sub: "s1", Filter: ibm}}}})
	stepRouter(t, r, 0, Envelope{From: "shb2", To: "r", Msg: Msg{Kind: MsgFilters, Nonce: 1, Epoch: 1}})

	nack := Msg{Kind: MsgNack, Pubend: "p", Ranges: []Range{{1, 10}}}
	up1 := stepRouter(t, r, 100, Envelope{From: "shb1", To: "r", Msg: nack})
	up2 := stepRouter(t, r, 200, Envelope{From: "shb2", To: "r", Msg: nack})
	if len(up1) != 1 || up1[0].To != "phb" || len(up2) != 0 {
		t.Fatalf("want one upstream nack, got %v then %v", up1, up2)
	}
	if r.Stats.NacksFromBelow != 2 || r.Stats.NacksUpstream != 1 {
		t.Fatalf("stats %+v", r.Stats)
	}
	// The status shows the one range asked and both links waiting for it.
	st := r.Nacks()
	if len(st) != 1 || st[0].AskedRanges != 1 || st[0].Asked[0] != (RangeStatus{From: 1, To: 10, Expires: 100 + r.cfg.NackTimeout}) ||
		len(st[0].Waiting) != 2 || st[0].Waiting["shb2"][0] != (RangeStatus{From: 1, To: 10, Expires: 200 + r.cfg.WaitTimeout}) {
		t.Fatalf("nack status %+v", st)
	}
	ev := match.MustEvent(match.Attr{Name: "sym", Value: match.Str("IBM")})
	out := stepRouter(t, r, 300, Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: 5, Prev: 0, Event: ev}})
	out = append(out, stepRouter(t, r, 300, Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgSilence, Pubend: "p", From: 6, To: 10}})...)
	got := map[string][]string{}
	for _, e := range out {
		got[e.To] = append(got[e.To], e.Msg.String())
	}
	want := map[string][]string{
		"shb1": {`data p t=5 prev=0 {"sym":"IBM"}`, "silence p [6,10]"},
		"shb2": {"silence p [1,5] filtered by r v=1.1", "silence p [6,10]"},
	}
	for to, w := range want {
		if len(got[to]) != len(w) || got[to][0] != w[0] || got[to][1] != w[1] {
			t.Fatalf("to %s: got %q, want %q", to, got[to], w)
		}
	}
	if st := r.Nacks(); st[0].AskedRanges != 0 || len(st[0].Waiting) != 0 {
		t.Fatalf("nack status %+v once answered", st)
	}
	// The same nack later is answered from the cache, not forwarded.
	ans := stepRouter(t, r, 400, Envelope{From: "shb1", To: "r", Msg: Msg{Kind: MsgNack, Pubend: "p", Ranges: []Range{{5, 5}}}})
	if len(ans) != 1 || ans[0].To != "shb1" || ans[0].Msg.Kind != MsgData || r.Stats.NacksUpstream != 1 {
		t.Fatalf("cached answer: %v, stats %+v", ans, r.Stats)
	}
}

// TestRouterUnfilteredUntilComplete checks that after a (re)start a router
// forwards D unfiltered until the link's filter set is complete, and that a
// full set answering an earlier incarnation's resync is ignored.
func TestRouterUnfilteredUntilComplete(t *testing.T) {
	r, err := NewRouter(RouterConfig{Node: "r", Upstream: map[string]string{"p": "phb"},
		Downstream: []string{"shb1"}, Incarnation: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev := match.MustEvent(match.Attr{Name: "sym", Value: match.Str("SUN")})
	data := func(tick Tick) Envelope {
		return Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: tick, Prev: tick - 1, Event: ev}}
	}
	if out := stepRouter(t, r, 0, data(1)); len(out) != 1 || out[0].Msg.Kind != MsgData {
		t.Fatalf("incomplete link must forward D: %v", out)
	}
	stale := Msg{Kind: MsgFilters, Nonce: 1, Epoch: 1}
	stepRouter(t, r, 0, Envelope{From: "shb1", To: "r", Msg: stale})
	if out := stepRouter(t, r, 0, data(2)); len(out) != 1 || out[0].Msg.Kind != MsgData {
		t.Fatalf("a stale full set must not complete the link: %v", out)
	}
	stepRouter(t, r, 0, Envelope{From: "shb1", To: "r", Msg: Msg{Kind: MsgFilters, Nonce: 2, Epoch: 1}})
	out := stepRouter(t, r, 0, data(3))
	if len(out) != 1 || out[0].Msg.Kind != MsgSilence || !out[0].Msg.Filtered || out[0].Msg.Epoch != 2 {
		t.Fatalf("complete link with no matching filter must send a stamped silence: %v", out)
	}
}

// TestRouterInstallAckWaitsForEveryUpstream checks multi-hop install
// acknowledgements: a router with two upstream neighbours acknowledges an
// install down only once both have acknowledged it, with per pubend the
// higher of its own last forwarded tick and the tick the pubend's upstream
// acknowledged, and every stamp on the way.
func TestRouterInstallAckWaitsForEveryUpstream(t *testing.T) {
	r, err := NewRouter(RouterConfig{Node: "r2", Upstream: map[string]string{"p": "r1", "q": "phbq"},
		Downstream: []string{"shb"}, Incarnation: 3})
	if err != nil {
		t.Fatal(err)
	}
	ev := match.MustEvent(match.Attr{Name: "k", Value: match.Int(1)})
	stepRouter(t, r, 0, Envelope{From: "r1", To: "r2", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: 50, Event: ev}})
	up := stepRouter(t, r, 0, Envelope{From: "shb", To: "r2", Msg: Msg{Kind: MsgInstall, Sub: "s1",
		Filter: match.MustParse(`k < 4`), Epoch: 1, Version: 1}})
	if len(up) != 2 || up[0].To != "phbq" || up[1].To != "r1" || up[0].Msg.Sub != "shb|s1" {
		t.Fatalf("install must go to both upstream neighbours as shb|s1: %v", up)
	}
	ackR1 := ackOf(up[1].Msg, CT{"p": 40, "q": 99}, Stamp{Node: "r1", Epoch: 7, Version: 2})
	if out := stepRouter(t, r, 0, Envelope{From: "r1", To: "r2", Msg: ackR1}); len(out) != 0 {
		t.Fatalf("acknowledged before every upstream did: %v", out)
	}
	out := stepRouter(t, r, 0, Envelope{From: "phbq", To: "r2", Msg: ackOf(up[0].Msg, CT{"q": 70})})
	if len(out) != 1 || out[0].To != "shb" {
		t.Fatalf("want one acknowledgement down: %v", out)
	}
	got := out[0].Msg
	// p: own lastFwd 50 beats r1's 40; q: phbq's 70 (r1's 99 is not for q).
	if got.Sub != "s1" || got.CT["p"] != 50 || got.CT["q"] != 70 || len(got.Stamps) != 2 ||
		got.Stamps[0].Node != "r2" || got.Stamps[0].Epoch != 3 || got.Stamps[1] != ackR1.Stamps[0] ||
		got.Epoch != 1 || got.Version != 1 {
		t.Fatalf("acknowledgement %v", got)
	}
	if out := stepRouter(t, r, 0, Envelope{From: "phbq", To: "r2", Msg: ackOf(up[0].Msg, nil)}); len(out) != 0 {
		t.Fatalf("a duplicate upstream acknowledgement was passed down: %v", out)
	}
}

// ackOf returns the acknowledgement of install m, echoing its stamp, as
// the hop it went to sends it.
func ackOf(m Msg, ct CT, stamps ...Stamp) Msg {
	return Msg{Kind: MsgInstallAck, Sub: m.Sub, CT: ct, Stamps: stamps, Epoch: m.Epoch, Version: m.Version}
}

// newInstallRouter returns a router of incarnation 4 between an SHB and
// pubend p's PHB, with install, which installs s1's filter from the SHB
// at (epoch, version) and returns the install sent up, and ack, which
// steps the PHB's acknowledgement of an install sent up and returns what
// the router sends.
func newInstallRouter(t *testing.T) (*Router, func(epoch, ver uint64) Msg, func(Msg) []Envelope) {
	t.Helper()
	r, err := NewRouter(RouterConfig{Node: "r", Upstream: map[string]string{"p": "phb"},
		Downstream: []string{"shb"}, Incarnation: 4})
	if err != nil {
		t.Fatal(err)
	}
	f := match.MustParse(`k < 4`)
	install := func(epoch, ver uint64) Msg {
		t.Helper()
		up := stepRouter(t, r, 0, Envelope{From: "shb", To: "r", Msg: Msg{Kind: MsgInstall, Sub: "s1", Filter: f, Epoch: epoch, Version: ver}})
		if len(up) != 1 || up[0].To != "phb" {
			t.Fatalf("install %d.%d: want one install up, got %v", epoch, ver, up)
		}
		return up[0].Msg
	}
	ack := func(m Msg) []Envelope {
		t.Helper()
		return stepRouter(t, r, 0, Envelope{From: "phb", To: "r", Msg: ackOf(m, CT{"p": 9})})
	}
	return r, install, ack
}

// TestRouterInstallAckOfItsOwnInstalls checks which upstream
// acknowledgements complete a pending install: one of an earlier
// incarnation's install, or of an install since withdrawn and made again,
// is ignored; one of an earlier send of the same pending install counts
// (a resend from below keeps the install waiting as it was), and the
// acknowledgement down echoes the newest install from below.
func TestRouterInstallAckOfItsOwnInstalls(t *testing.T) {
	r, install, ack := newInstallRouter(t)
	first := install(1, 1)
	stale := first
	stale.Epoch = 3 // the same key's install by the router's previous incarnation
	if out := ack(stale); len(out) != 0 {
		t.Fatalf("an earlier incarnation's acknowledgement was taken: %v", out)
	}
	install(2, 1) // the SHB restarted and resent
	out := ack(first)
	if len(out) != 1 || out[0].To != "shb" || out[0].Msg.Epoch != 2 || out[0].Msg.Version != 1 {
		t.Fatalf("the first send's acknowledgement: got %v, want one down answering 2.1", out)
	}

	withdrawn := install(2, 2)
	stepRouter(t, r, 0, Envelope{From: "shb", To: "r", Msg: Msg{Kind: MsgUninstall, Sub: "s1", Epoch: 2, Version: 3}})
	again := install(2, 4)
	if out := ack(withdrawn); len(out) != 0 {
		t.Fatalf("the withdrawn install's acknowledgement was taken: %v", out)
	}
	if out := ack(again); len(out) != 1 || out[0].Msg.Version != 4 {
		t.Fatalf("the new install's acknowledgement: got %v, want one down answering 2.4", out)
	}
}

// TestRouterFullSetWithdrawsPendingInstall checks that a full filter set
// from below that drops a filter whose install still waits upstream
// withdraws that install: this router's own sets upstream leave the filter
// out from then on, so an acknowledgement of the earlier install may have
// been made before such a set dropped it there. The next install of the
// filter from below waits for an acknowledgement of its own.
func TestRouterFullSetWithdrawsPendingInstall(t *testing.T) {
	r, install, ack := newInstallRouter(t)
	before := install(1, 1)
	// The SHB restarted and lost the pending subscription: its whole set
	// leaves s1 out. Then its subscriber resumes and s1 is installed again.
	stepRouter(t, r, 0, Envelope{From: "shb", To: "r", Msg: Msg{Kind: MsgFilters, Epoch: 2, Version: 1, Nonce: 4}})
	again := install(2, 2)
	if out := ack(before); len(out) != 0 {
		t.Fatalf("the acknowledgement of the install the full set withdrew was taken: %v", out)
	}
	if out := ack(again); len(out) != 1 || out[0].To != "shb" || out[0].Msg.Epoch != 2 || out[0].Msg.Version != 2 {
		t.Fatalf("the new install's acknowledgement: got %v, want one down answering 2.2", out)
	}
}

// TestRouterNackAfterAnswerPassed: a nack for ticks that an outstanding
// upstream nack's answer already brought through the router, and that its
// cache has since forgotten (a catch-up session fetching again events its
// SHB passed while recovering an outage), goes upstream at once; the
// ticks the answer has not reached yet stay consolidated with it (fails
// without trimming the outstanding nack by each answer: tick 3 waits for
// the outstanding nack to expire).
func TestRouterNackAfterAnswerPassed(t *testing.T) {
	r, err := NewRouter(RouterConfig{Node: "r", Upstream: map[string]string{"p": "phb"},
		Downstream: []string{"shb"}, Incarnation: 1, CacheRuns: 4})
	if err != nil {
		t.Fatal(err)
	}
	ev := match.MustEvent(match.Attr{Name: "g", Value: match.Int(1)})
	data := func(tk Tick) Envelope {
		return Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: tk, Prev: tk - 1, Event: ev}}
	}
	for tk := Tick(1); tk <= 20; tk++ {
		stepRouter(t, r, 10, data(tk)) // live, while the SHB is down
	}
	nack := func(now Tick, rg Range) []Envelope {
		return stepRouter(t, r, now, Envelope{From: "shb", To: "r", Msg: Msg{Kind: MsgNack, Pubend: "p", Ranges: []Range{rg}}})
	}
	base := r.pubends["p"].stream.Base()
	if base < 10 {
		t.Fatalf("cache base %d: the test needs ticks 1-10 forgotten", base)
	}
	if up := nack(100, Range{1, base}); len(up) != 1 || up[0].To != "phb" {
		t.Fatalf("recovery nack: got %v, want one upstream nack", up)
	}
	for tk := Tick(1); tk <= 8; tk++ {
		if out := stepRouter(t, r, 200, data(tk)); len(out) != 1 || out[0].To != "shb" {
			t.Fatalf("answer of tick %d: got %v, want it forwarded to the waiting SHB", tk, out)
		}
	}
	up := nack(300, Range{3, 3})
	if len(up) != 1 || up[0].To != "phb" || up[0].Msg.Ranges[0] != (Range{3, 3}) {
		t.Fatalf("nack of tick 3, answered and forgotten: got %v, want [3,3] upstream at once", up)
	}
	if up := nack(300, Range{9, 9}); len(up) != 0 {
		t.Fatalf("nack of tick 9, not answered yet: got %v, want it consolidated with the outstanding nack", up)
	}
}
