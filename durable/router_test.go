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
	ev := match.MustEvent(match.Attr{Name: "sym", Value: match.Str("IBM")})
	out := stepRouter(t, r, 300, Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgData, Pubend: "p", Tick: 5, Prev: 0, Event: ev}})
	out = append(out, stepRouter(t, r, 300, Envelope{From: "phb", To: "r", Msg: Msg{Kind: MsgSilence, Pubend: "p", From: 6, To: 10}})...)
	got := map[string][]string{}
	for _, e := range out {
		got[e.To] = append(got[e.To], e.Msg.String())
	}
	want := map[string][]string{
		"shb1": {`data p t=5 prev=0 {"sym":"IBM"}`, "silence p [6,10]"},
		"shb2": {"silence p [1,5]", "silence p [6,10]"},
	}
	for to, w := range want {
		if len(got[to]) != len(w) || got[to][0] != w[0] || got[to][1] != w[1] {
			t.Fatalf("to %s: got %q, want %q", to, got[to], w)
		}
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
