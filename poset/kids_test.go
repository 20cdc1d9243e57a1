package poset

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// forceKids draws whether child indexes are built at every size for the
// rest of the property run; it returns the function that restores the
// default.
func forceKids(t *rapid.T) func() {
	old := childIndexMin
	if rapid.Bool().Draw(t, "child index everywhere") {
		childIndexMin = 1
	}
	return func() { childIndexMin = old }
}

// checkKids checks that every child index holds exactly its node's
// children: groups sorted, non-empty and contiguous, each child in the
// group of its first string equality, each group in seq order.
func checkKids(c *core) error {
	for _, n := range allNodes(c) {
		x := n.kids()
		if x == nil {
			continue
		}
		next := int32(0)
		for i, k := range x.keys {
			if i > 0 && (x.keys[i-1].attr > k.attr || x.keys[i-1].attr == k.attr && x.keys[i-1].hash >= k.hash) {
				return fmt.Errorf("node %s: child index groups out of order", n.text)
			}
			if k.start != next || k.count == 0 {
				return fmt.Errorf("node %s: child index group %d at %d (want %d), %d children", n.text, i, k.start, next, k.count)
			}
			next += k.count
			group := x.nodes[k.start:next]
			if !slices.IsSortedFunc(group, func(a, b *node) int { return cmpSeq(a, b.seq) }) {
				return fmt.Errorf("node %s: child index group %d not in seq order", n.text, i)
			}
			for _, ch := range group {
				if ch.key.eqAttr != k.attr || ch.key.eqHash != k.hash {
					return fmt.Errorf("node %s: child %s in the wrong group", n.text, ch.text)
				}
			}
		}
		if int(next) != len(x.nodes) {
			return fmt.Errorf("node %s: child index groups hold %d of %d nodes", n.text, next, len(x.nodes))
		}
		fresh := kidIndex{keys: x.keys, nodes: x.nodes}
		fresh.derive()
		if !slices.Equal(fresh.hashes, x.hashes) || !slices.Equal(fresh.starts, x.starts) || !slices.Equal(fresh.spans, x.spans) {
			return fmt.Errorf("node %s: child index lookup arrays stale", n.text)
		}
		got := slices.Clone(x.nodes)
		slices.SortFunc(got, func(a, b *node) int { return cmpSeq(a, b.seq) })
		if !slices.Equal(got, n.children()) {
			return fmt.Errorf("node %s: child index holds %d nodes, %d children", n.text, len(got), len(n.children()))
		}
	}
	return nil
}

// TestKidIndexOverlapping: the child index's walk yields exactly the
// children that do not require another value of the filter's first string
// equality, for filters on every attribute, as children come and go.
func TestKidIndexOverlapping(t *testing.T) {
	c := NewPoset(Config{}).core
	var kids []*node
	for _, text := range []string{`a == "x"`, `a == "y"`, `b == "x"`, `b == "z"`, `n > 1`,
		`a == "x" && c == "q"`, `c == "q"`, `c == "r" && n < 3`, `a == "y" && b == "x"`, `d exists`} {
		kids = append(kids, c.newNode(match.MustParse(text), text))
	}
	probes := append([]*node{c.newNode(match.MustParse(`m == 4`), `m == 4`)}, kids...)
	x := &kidIndex{}
	check := func(live []*node) {
		t.Helper()
		for _, u := range probes {
			var got []*node
			for _, run := range x.overlapping(u.key.eqAttr, u.key.eqHash, nil) {
				got = append(got, run...)
			}
			var want []*node
			for _, ch := range live {
				if u.key.eqAttr == 0 || ch.key.eqAttr != u.key.eqAttr || ch.key.eqHash == u.key.eqHash {
					want = append(want, ch)
				}
			}
			slices.SortFunc(got, func(a, b *node) int { return cmpSeq(a, b.seq) })
			if !slices.Equal(got, want) {
				t.Fatalf("probe %s: walk gives %d children, want %d", u.text, len(got), len(want))
			}
		}
	}
	for i, k := range kids {
		x.add(k)
		check(kids[:i+1])
	}
	for i, k := range kids {
		x.remove(k)
		check(kids[i+1:])
	}
	if len(x.keys) != 0 || len(x.nodes) != 0 {
		t.Fatalf("emptied index keeps %d groups, %d nodes", len(x.keys), len(x.nodes))
	}
}
