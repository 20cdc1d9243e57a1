package poset

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestNodeTableAgreesWithMap: random adds and removes of nodes, found by
// text (textKey) or by node (nodeKey), leave the table answering every
// lookup as a map does, through growth from empty. The hash is also forced
// to a few values, and to one tag byte, so that probe runs meet, wrap
// around the table and are cut by removals, and every probe compares
// nodes whose tags agree.
func TestNodeTableAgreesWithMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		hash func(*node) uint64
	}{
		{"textKey", textKey},
		{"nodeKey", nodeKey},
		{"few", func(n *node) uint64 { return uint64(len(n.text) % 5) }},
		{"oneTag", func(n *node) uint64 { return textKey(n) &^ (0xff << 56) }},
	} {
		t.Run(tc.name, func(t *testing.T) { testNodeTable(t, tc.hash) })
	}
}

func testNodeTable(t *testing.T, hash func(*node) uint64) {
	rapid.Check(t, func(rt *rapid.T) {
		tb := newNodeTable(hash)
		texts := rapid.IntRange(1, 80).Draw(rt, "texts")
		nodes := make([]*node, texts) // by text number, once made
		want := map[string]*node{}
		for range rapid.IntRange(1, 400).Draw(rt, "steps") {
			i := rapid.IntRange(0, texts-1).Draw(rt, "text")
			text := fmt.Sprintf("k == %d%s", i, "xxxxx"[:i%5])
			if n, ok := want[text]; ok {
				if !tb.remove(n) {
					rt.Fatalf("remove(%s): not found", text)
				}
				if tb.remove(n) {
					rt.Fatalf("remove(%s) twice: found the second time", text)
				}
				delete(want, text)
			} else {
				n := &node{text: text, seq: uint64(i)}
				nodes[i] = n // a new node for the text each time: found by its address too
				tb.add(n)
				want[text] = n
			}
			checkNodeTable(rt, &tb, hash, nodes, want)
		}
		for _, n := range want {
			tb.remove(n)
		}
		if tb.len() != 0 || slices.ContainsFunc(tb.slots, func(n *node) bool { return n != nil }) || slices.ContainsFunc(tb.tags, func(b uint8) bool { return b != 0 }) {
			rt.Fatalf("after removing every member: %d members, slots %v, tags %v", tb.len(), tb.slots, tb.tags)
		}
	})
}

// checkNodeTable checks every lookup of tb against want (the members by
// text); nodes holds the latest node made for each text.
func checkNodeTable(rt *rapid.T, tb *nodeTable, hash func(*node) uint64, nodes []*node, want map[string]*node) {
	if tb.len() != len(want) {
		rt.Fatalf("the table holds %d nodes, want %d", tb.len(), len(want))
	}
	for _, n := range nodes {
		if n == nil {
			continue
		}
		w, in := want[n.text]
		got := tb.lookup(hash(n), func(m *node) bool { return m.text == n.text })
		if got != w || (got != nil) != in {
			rt.Fatalf("lookup(%s) = %p, want %p", n.text, got, w)
		}
		if byNode := tb.lookup(hash(n), func(m *node) bool { return m == n }) != nil; byNode != (w == n) {
			rt.Fatalf("lookup of node %p (%s): %v, want %v", n, n.text, byNode, w == n)
		}
	}
	seen := 0
	for n := range tb.all {
		if want[n.text] != n {
			rt.Fatalf("all yields %s (%p), not a member", n.text, n)
		}
		seen++
	}
	if seen != len(want) {
		rt.Fatalf("all yields %d members, want %d", seen, len(want))
	}
}

// TestNodeTableKeys: get finds a member by its text in a textKey table,
// has a member by its address in a nodeKey table, and neither finds a node
// of the same text that is not the member.
func TestNodeTableKeys(t *testing.T) {
	a, b := &node{text: "a == 1"}, &node{text: "a == 1"}
	byText, byNode := newNodeTable(textKey), newNodeTable(nodeKey)
	byText.add(a)
	byNode.add(a)
	if byText.get("a == 1") != a || byText.get("a == 2") != nil {
		t.Fatalf("get: %p, %p; want %p, nil", byText.get("a == 1"), byText.get("a == 2"), a)
	}
	if !byNode.has(a) || byNode.has(b) {
		t.Fatalf("has: %v for the member, %v for another node of its text", byNode.has(a), byNode.has(b))
	}
	if byText.remove(b) || byNode.remove(b) {
		t.Fatal("removed a node that is not a member")
	}
}
