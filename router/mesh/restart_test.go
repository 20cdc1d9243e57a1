package mesh

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
)

// TestLinkUpReplacesStaleLink checks the incarnation rule: a hello from a
// linked router with the same incarnation is refused; with another one the
// old link is dropped (reported in Close) and the new one takes its place,
// even at MaxLinks; and a new-incarnation hello refused for another reason
// leaves the stale link alone.
func TestLinkUpReplacesStaleLink(t *testing.T) {
	m, err := New(Config{Name: "a", MaxLinks: 2, Incarnation: 1})
	if err != nil {
		t.Fatal(err)
	}
	hello := func(name string, inc uint64, reach ...string) *wire.LinkHello {
		return &wire.LinkHello{MinVersion: 1, MaxVersion: 1, Name: name, Reach: append(reach, name), Incarnation: inc}
	}
	old, _, err := m.LinkUp(hello("b", 10, "c"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.LinkUp(hello("d", 20)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.LinkUp(hello("b", 10)); err == nil || !strings.Contains(err.Error(), "already linked to b") {
		t.Fatalf("same incarnation: err %v, want already linked", err)
	}
	if _, _, err := m.LinkUp(hello("b", 11, "d")); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("new incarnation closing a cycle: err %v, want a cycle refusal", err)
	}
	if m.links[old] == nil {
		t.Fatal("a refused hello dropped the stale link")
	}
	id, out, err := m.LinkUp(hello("b", 11, "c"))
	if err != nil {
		t.Fatalf("new incarnation: %v", err)
	}
	if len(out.Close) != 1 || out.Close[0].Link != old || !strings.Contains(out.Close[0].Reason, "b restarted") {
		t.Fatalf("close %+v, want link %d closed as stale", out.Close, old)
	}
	if m.links[old] != nil || m.links[id] == nil || len(m.links) != 2 {
		t.Fatalf("links %v: want the stale link %d replaced by %d", m.links, old, id)
	}
	if h := m.HelloTo("b"); h.Incarnation != 1 || strings.Join(h.Reach, ",") != "a,d" {
		t.Fatalf("hello to b: %+v, want incarnation 1 and reach a,d (not what b reaches)", h)
	}
}
