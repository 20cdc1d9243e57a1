package poset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// checkShallow checks the shallow forest's invariants beyond checkCommon
// (every edge a covering, back links, seq order): at most one parent per
// node, and pairwise incomparable roots.
func checkShallow(s *Shallow) error {
	if err := checkCommon(s.core); err != nil {
		return err
	}
	for _, n := range allNodes(s.core) {
		if len(n.parents()) > 1 {
			return fmt.Errorf("node %s has %d parents", n.text, len(n.parents()))
		}
	}
	roots := s.roots.members()
	for i, x := range roots {
		for _, y := range roots[i+1:] {
			if Covers(x.filter(), y.filter()) || Covers(y.filter(), x.filter()) {
				return fmt.Errorf("roots %s and %s are comparable", x.text, y.text)
			}
		}
	}
	return nil
}

// TestShallowChainStaysShallow: a covering chain inserted narrowest first
// (each insert a new root adopting the last) and then widest first (each
// insert a child of the one root) costs one root query per insert: the
// covering tests per insert stay bounded, not proportional to the chain.
func TestShallowChainStaysShallow(t *testing.T) {
	const n = 2000
	s := NewShallow(Config{})
	id := match.ID(0)
	for i := range n { // price < 1, < 2, ...: each covers all before it
		if err := s.Add(id, 1, match.MustParse(fmt.Sprintf(`symbol == "A" && price < %d`, i+1))); err != nil {
			t.Fatal(err)
		}
		id++
	}
	for i := range n { // price < -1, < -2, ...: the root covers each
		if err := s.Add(id, 1, match.MustParse(fmt.Sprintf(`symbol == "A" && price < %d`, -i-1))); err != nil {
			t.Fatal(err)
		}
		id++
	}
	if err := checkShallow(s); err != nil {
		t.Fatal(err)
	}
	if got := s.roots.len(); got != 1 {
		t.Fatalf("%d roots, want 1", got)
	}
	if c := s.Counters(); c.InsertTests > 4*uint64(2*n) {
		t.Fatalf("%d covering tests for %d inserts: not bounded per insert", c.InsertTests, 2*n)
	}
}

// TestShallowRefusesAssist: RTO and FF need the poset's or the forest's
// placement rules; the shallow forest refuses them with an error and
// changes nothing.
func TestShallowRefusesAssist(t *testing.T) {
	tab, err := NewTable(TableConfig{Structure: "shallow", Neighbours: []Iface{1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Pin([]match.Filter{match.MustParse(`a > 1`)}); err == nil || !strings.Contains(err.Error(), "shallow") {
		t.Fatalf("Pin: %v, want an error naming the shallow forest", err)
	}
	s := NewShallow(Config{})
	if _, err := s.StartRTO(1, 2, match.MustParse(`a > 1`), RTOConfig{}); err == nil || !strings.Contains(err.Error(), "shallow") {
		t.Fatalf("StartRTO: %v, want an error naming the shallow forest", err)
	}
	if s.Len() != 0 || len(tab.Fixed()) != 0 {
		t.Fatal("a refused assist changed the structure")
	}
}
