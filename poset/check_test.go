package poset

import (
	"fmt"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// checkCommon verifies what both structures promise: consistent links,
// seq-ordered lists, roots exactly the parentless nodes, every subscription
// held by a node whose filter is equivalent to its own, no node without
// subscriptions unless fixed, and every edge a covering.
func checkCommon(c *core) error {
	if err := checkKids(c); err != nil {
		return err
	}
	nodes := allNodes(c)
	if c.all.indexing && !slices.IsSortedFunc(c.all.members(), func(a, b *node) int { return cmpSeq(a, b.seq) }) {
		return fmt.Errorf("node list not in seq order")
	}
	var roots []*node
	for _, n := range nodes {
		if n.isRoot() {
			roots = append(roots, n)
		}
		if err := checkLayout(n); err != nil {
			return err
		}
		if n.nsubs() == 0 && !n.pinned {
			return fmt.Errorf("node %s has no subscriptions", n.text)
		}
		for e := range n.subs {
			f := c.entryFilter(n, e)
			if c.nodeOf(e.id, f.String()) != n {
				return fmt.Errorf("subscription %d not indexed to its node", e.id)
			}
			if !Covers(n.filter(), f) || !Covers(f, n.filter()) {
				return fmt.Errorf("subscription %d (%s) not equivalent to its node %s", e.id, f, n.text)
			}
		}
		for _, ch := range n.children() {
			if !slices.Contains(ch.parents(), n) {
				return fmt.Errorf("edge %s -> %s missing its back link", n.text, ch.text)
			}
			if !Covers(n.filter(), ch.filter()) {
				return fmt.Errorf("edge %s -> %s is not a covering", n.text, ch.text)
			}
		}
		for _, p := range n.parents() {
			if !slices.Contains(p.children(), n) {
				return fmt.Errorf("parent link %s -> %s missing its child link", p.text, n.text)
			}
		}
		if !slices.IsSortedFunc(n.children(), func(a, b *node) int { return cmpSeq(a, b.seq) }) {
			return fmt.Errorf("children of %s not in seq order", n.text)
		}
	}
	if !slices.Equal(roots, c.roots.members()) {
		return fmt.Errorf("roots list differs from the parentless nodes")
	}
	return checkReachable(c)
}

// checkReachable verifies that every node lies below a root: a cycle of
// edges can leave nodes that no root leads to, and Match never sees them.
// The structure counts its nodes (and lists them all only when indexed):
// the nodes reached from the roots must be that many, and include every
// node found by text and, when listed, every node listed.
func checkReachable(c *core) error {
	seen := map[*node]bool{}
	for _, n := range allNodes(c) {
		seen[n] = true
	}
	if len(seen) != c.nodes {
		return fmt.Errorf("%d nodes lie below a root, the structure counts %d", len(seen), c.nodes)
	}
	var lost error
	c.byText.all(func(n *node) bool {
		if !seen[n] {
			lost = fmt.Errorf("node %s, found by its text, lies below no root", n.text)
		}
		return lost == nil
	})
	if lost != nil {
		return lost
	}
	if c.all.indexing {
		for _, n := range c.all.members() {
			if !seen[n] {
				return fmt.Errorf("node %s lies below no root", n.text)
			}
		}
		if c.all.len() != c.nodes {
			return fmt.Errorf("the node list holds %d nodes, the structure counts %d", c.all.len(), c.nodes)
		}
	}
	return nil
}

// allNodes returns the nodes reached from the roots, in seq order.
func allNodes(c *core) []*node {
	seen := map[*node]bool{}
	var out []*node
	queue := slices.Clone(c.roots.members())
	for len(queue) > 0 {
		n := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
			queue = append(queue, n.children()...)
		}
	}
	slices.SortFunc(out, func(a, b *node) int { return cmpSeq(a, b.seq) })
	return out
}

// checkLayout verifies the node's layout: a node keeps its one
// subscription inline and everything else in its record (more), which it
// holds only while that is not empty; and a simple key keeps no box, the
// spans it rebuilds being boxOf's.
func checkLayout(n *node) error {
	m := n.more
	switch {
	case n.hasOne && m != nil && len(m.entries) > 0:
		return fmt.Errorf("node %s: a subscription inline and %d in its record", n.text, len(m.entries))
	case m != nil && len(m.entries) == 1:
		return fmt.Errorf("node %s: one subscription in its record, not inline", n.text)
	case m != nil && len(m.children) == 0 && len(m.parents) == 0 && m.kids == nil && len(m.entries) == 0:
		return fmt.Errorf("node %s keeps an empty record", n.text)
	case !n.hasOne && (n.oneID != 0 || n.oneFrom != 0):
		return fmt.Errorf("node %s: no inline subscription, yet its fields hold %d@%d", n.text, n.oneID, n.oneFrom)
	}
	k := &n.key
	if k.simple && (k.boxp != nil || k.nbox != 0) {
		return fmt.Errorf("node %s: a simple key keeps its box", n.text)
	}
	var buf [2]span
	if got, want := k.spans(&buf), boxOf(k.f); k.exact && !k.empty && !slices.Equal(got, want) {
		return fmt.Errorf("node %s: spans %+v, boxOf %+v", n.text, got, want)
	}
	return nil
}

// checkPoset verifies that the edges are exactly the immediate covering
// relation over the nodes, and that no two nodes are equivalent.
func checkPoset(p *Poset) error {
	if err := checkCommon(p.core); err != nil {
		return err
	}
	nodes := allNodes(p.core)
	for _, x := range nodes {
		for _, y := range nodes {
			if x == y {
				continue
			}
			cov := Covers(x.filter(), y.filter())
			if cov && Covers(y.filter(), x.filter()) {
				return fmt.Errorf("nodes %s and %s are equivalent", x.text, y.text)
			}
			immediate := cov
			for _, z := range nodes {
				if immediate && z != x && z != y && Covers(x.filter(), z.filter()) && Covers(z.filter(), y.filter()) {
					immediate = false
				}
			}
			if immediate != hasEdge(x, y) {
				return fmt.Errorf("edge %s -> %s: present %v, immediate covering %v", x.text, y.text, hasEdge(x, y), immediate)
			}
		}
	}
	return nil
}

// checkForest verifies one parent per node, parents covering children and
// siblings pairwise incomparable.
func checkForest(f *Forest) error {
	if err := checkCommon(f.core); err != nil {
		return err
	}
	levels := [][]*node{f.roots.members()}
	for _, n := range allNodes(f.core) {
		if len(n.parents()) > 1 {
			return fmt.Errorf("node %s has %d parents", n.text, len(n.parents()))
		}
		levels = append(levels, n.children())
	}
	for _, level := range levels {
		for i, x := range level {
			for _, y := range level[i+1:] {
				if Covers(x.filter(), y.filter()) || Covers(y.filter(), x.filter()) {
					return fmt.Errorf("siblings %s and %s are comparable", x.text, y.text)
				}
			}
		}
	}
	return nil
}

// checkMatch compares Match (ids and interfaces) with Scan on events.
func checkMatch(c *core, scan *match.Scan, from map[match.ID]Iface, events []match.Event) error {
	for _, e := range events {
		got := match.SortIDs(c.Match(e, nil))
		want := match.SortIDs(scan.Match(e, nil))
		if !slices.Equal(got, want) {
			return fmt.Errorf("event %s: match %v, scan %v", e, describe(got), describe(want))
		}
		var wantIf []Iface
		for _, id := range want {
			if !slices.Contains(wantIf, from[id]) {
				wantIf = append(wantIf, from[id])
			}
		}
		slices.Sort(wantIf)
		if gotIf := c.MatchInterfaces(e, nil); !slices.Equal(gotIf, wantIf) {
			return fmt.Errorf("event %s: interfaces %v, want %v", e, gotIf, wantIf)
		}
	}
	return nil
}

// boxed returns k deciding from its box alone: simple off, and the box
// built (a simple key keeps none).
func boxed(k key) key {
	if k.exact && !k.empty {
		k.setBox(boxOf(k.f))
	}
	k.simple = false
	return k
}
