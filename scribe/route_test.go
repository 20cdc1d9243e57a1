package scribe

import "testing"

type flat struct{}

func (flat) Distance(a, b Addr) int64 { return 1 }

// TestRareCaseAroundDeadEntry replays the first line of the seed's Example
// 3: 280d routes toward 150d through its table entry 1e7c; once 1e7c is
// dead, the rare case picks, among known nodes sharing as long a prefix
// with the key and numerically closer, the one closest to the key: 2010.
func TestRareCaseAroundDeadEntry(t *testing.T) {
	cfg := Config{Bits: 16, B: 2, Leaf: 2, Neighbours: 4}.WithDefaults()
	s := cfg.Space()
	id := func(hex string) ID {
		x, err := s.Parse(hex)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	n := NewNode(cfg, Ref{ID: id("280d"), Addr: 0}, flat{})
	for i, h := range []string{"1e7c", "2010", "0406", "9cc3", "7af1"} {
		n.Learn(Ref{ID: id(h), Addr: Addr(i + 1)})
	}
	key := id("150d")
	if next, ok := n.NextHop(key); !ok || s.Format(next.ID) != "1e7c" {
		t.Fatalf("prefix rule: next hop %s, want 1e7c", s.Format(next.ID))
	}
	var out Outbox
	n.MarkDead(0, 1, &out)
	if next, ok := n.NextHop(key); !ok || s.Format(next.ID) != "2010" {
		t.Fatalf("rare case: next hop %s, want 2010", s.Format(next.ID))
	}
	var asked bool
	for _, e := range out.Msgs {
		asked = asked || e.Msg.Kind == KindRowRequest
	}
	if !asked {
		t.Fatal("the dead table entry triggered no row repair request")
	}
	// Keys this node is closest to are delivered here.
	if _, ok := n.NextHop(id("280e")); ok {
		t.Fatal("280e should be delivered at 280d")
	}
}
