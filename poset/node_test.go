package poset

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestNodeSubs: a node's subscriptions, added and removed in any order
// (none, one inline, several in its record, back to one), are what a
// list kept beside says, in the same order, and the node keeps the
// layout checkLayout asks for after every step; edges added and removed
// meanwhile share the record.
func TestNodeSubs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n, other := &node{seq: 2}, &node{seq: 1}
		var want []entry
		edge := false
		for range rapid.IntRange(0, 40).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1:
				e := entry{id: match.ID(rapid.IntRange(0, 5).Draw(t, "id")), from: Iface(rapid.IntRange(0, 2).Draw(t, "from"))}
				if slices.ContainsFunc(want, func(w entry) bool { return w.id == e.id }) {
					continue // a node holds a subscription once
				}
				n.addSub(e)
				want = append(want, e)
			case 2:
				id := match.ID(rapid.IntRange(0, 5).Draw(t, "rm"))
				i := slices.IndexFunc(want, func(w entry) bool { return w.id == id })
				if got := n.removeSub(id); got != (i >= 0) {
					t.Fatalf("removeSub(%d) = %v, the node holds it: %v", id, got, i >= 0)
				}
				if i >= 0 {
					want = slices.Delete(want, i, i+1)
				}
			default:
				if edge {
					removeEdge(other, n)
				} else {
					addEdge(other, n)
				}
				edge = !edge
			}
			if got := slices.Collect(n.subs); !slices.Equal(got, want) || n.nsubs() != len(want) {
				t.Fatalf("subscriptions %v (%d), want %v", got, n.nsubs(), want)
			}
			if first, ok := n.firstSub(); ok != (len(want) > 0) || ok && first != want[0] {
				t.Fatalf("first subscription %v %v, want %v", first, ok, want)
			}
			if got := len(n.parents()) == 1 && len(other.children()) == 1; got != edge {
				t.Fatalf("edge present %v, want %v", got, edge)
			}
			for _, m := range []*node{n, other} {
				if err := checkLayout(m); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// TestNodeSize: a node fits the 144-byte size class on a 64-bit machine
// (the class it is allocated in decides what a held filter costs; one
// field more, or padding, moves it to the next class).
func TestNodeSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 && unsafe.Sizeof(node{}) > 144 {
		t.Errorf("a node takes %d bytes, more than 144", unsafe.Sizeof(node{}))
	}
}
