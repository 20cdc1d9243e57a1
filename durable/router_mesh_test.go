package durable

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestRouterMeshInstallsAway checks a mesh router (b between a and c,
// pubend pa behind a, pc behind c, its own SHB below): an install from
// link a goes up to c only, never back to a; an install from the SHB goes
// to both; each is acknowledged once the neighbours it went to have, with
// a CT for the pubends that flow toward the link; knowledge and nacks of a
// pubend never go back toward its host; upstream keys stay within a
// subscription id's length however long the key from below is.
func TestRouterMeshInstallsAway(t *testing.T) {
	r, err := NewRouter(RouterConfig{Node: "b", Upstream: map[string]string{"pa": "a", "pc": "c"},
		Downstream: []string{"a", "b/shb", "c"}, Incarnation: 1})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := match.Parse(`*`)
	out := stepRouter(t, r, 0, Envelope{From: "a", To: "b", Msg: Msg{Kind: MsgInstall, Sub: "a/shb|s1", Filter: all, Epoch: 1, Version: 1}})
	if len(out) != 1 || out[0].To != "c" || out[0].Msg.Sub != "a|a/shb|s1" {
		t.Fatalf("install from a: got %v, want one install to c", out)
	}
	ack := stepRouter(t, r, 1, Envelope{From: "c", To: "b", Msg: Msg{Kind: MsgInstallAck, Sub: "a|a/shb|s1", CT: CT{"pc": 7},
		Stamps: []Stamp{{Node: "c", Epoch: 3, Version: 2}}, Epoch: out[0].Msg.Epoch, Version: out[0].Msg.Version}})
	if len(ack) != 1 || ack[0].To != "a" || ack[0].Msg.Kind != MsgInstallAck {
		t.Fatalf("ack: got %v", ack)
	}
	if m := ack[0].Msg; m.Epoch != 1 || m.Version != 1 {
		t.Fatalf("ack answers v=%d.%d, want the install from a's 1.1", m.Epoch, m.Version)
	}
	if ct := ack[0].Msg.CT; len(ct) != 1 || ct["pc"] != 7 {
		t.Fatalf("ack CT %v, want only pc at 7 (pa flows from a)", ct)
	}
	out = stepRouter(t, r, 2, Envelope{From: "b/shb", To: "b", Msg: Msg{Kind: MsgInstall, Sub: "s2", Filter: all, Epoch: 1, Version: 2}})
	if len(out) != 2 || out[0].To != "a" || out[1].To != "c" {
		t.Fatalf("install from the SHB: got %v, want installs to a and c", out)
	}
	// Knowledge of pa from a goes to the SHB and to c, not back to a.
	out = stepRouter(t, r, 3, Envelope{From: "a", To: "b", Msg: Msg{Kind: MsgSilence, Pubend: "pa", From: 1, To: 5}})
	for _, e := range out {
		if e.To == "a" {
			t.Fatalf("knowledge of pa sent back to a: %v", out)
		}
	}
	if len(out) != 2 {
		t.Fatalf("knowledge of pa: got %v, want the SHB and c", out)
	}
	if out := stepRouter(t, r, 4, Envelope{From: "a", To: "b", Msg: Msg{Kind: MsgNack, Pubend: "pa", Ranges: []Range{{1, 9}}}}); len(out) != 0 {
		t.Fatalf("a nack of pa from a: got %v, want nothing", out)
	}
	long := strings.Repeat("x", 254) // "a|" and it would be 256 bytes
	out = stepRouter(t, r, 5, Envelope{From: "a", To: "b", Msg: Msg{Kind: MsgInstall, Sub: long, Filter: all, Epoch: 1, Version: 3}})
	if len(out) != 1 || len(out[0].Msg.Sub) > maxUpKey || out[0].Msg.Sub != upKey("a", long) {
		t.Fatalf("long key: got %v", out)
	}
	if k := upKey("a", long); k != upKey("a", long) || k == upKey("a", long+"y") || strings.Contains(k, "|") {
		t.Fatalf("hashed keys: %q", k)
	}
}
