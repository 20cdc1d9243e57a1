package poset

import (
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// Iface identifies an interface of a router: a local client connection or a
// neighbour router. Structures store it with each subscription and the
// routing Table decides what to forward to each neighbour from it.
type Iface uint32

// entry is one subscription held by a node. Its filter is the node's own
// (key.f) but for the subscriptions core.others lists (an equivalent
// filter of another text): a subscription's filter is nearly always its
// node's, and a filter header in each entry made the entries of a node of
// one subscription a 48-byte allocation instead of 16 (core.entryFilter).
type entry struct {
	id   match.ID
	from Iface
}

// node is one element of a structure: a class of equivalent filters (under
// Covers in both directions) with the subscriptions that use them.
//
// Most nodes a router holds have one subscription and no edge (the
// filters a neighbour forwarded, which nothing covers at high counts), so
// the node keeps one subscription inline and everything else a node may
// have (edges, a child index, a second subscription) in a record of its
// own (more), allocated only for the nodes that need it: the node is
// allocated in a size class, and the three slices and the pointer it had
// inline took it from the 144-byte class to the 224-byte one.
type node struct {
	key  key
	text string // canonical text of key.f
	seq  uint64 // creation order; siblings are kept in seq order

	// Per-operation scratch, valid while mark equals the structure's epoch.
	mark uint64

	more *nodeMore // nil while the node has no edge and at most one subscription

	// The node's subscription while it has exactly one (hasOne); with two
	// or more, every one is in more.entries. See subs.
	oneID match.ID

	// The fields of a byte or four last, packed into two words: a node is
	// allocated in the size class its size rounds up to, so padding
	// between fields costs a size class (16 bytes) at every node.
	oneFrom               Iface // with oneID
	ipos                  int32 // position in the candidate index holding the node
	hasOne                bool  // oneID and oneFrom hold the node's one subscription
	pinned                bool  // a fixed filter (FF): stays without subscriptions
	upDone, up, downDone  bool  // per-operation scratch (mark)
	down, queued, visited bool
}

// nodeMore is what a node holds besides its filter and one subscription:
// the edges, the child index and, from two subscriptions on, all of
// them. A node without any of these has none (node.more nil).
type nodeMore struct {
	children []*node   // in seq order
	parents  []*node   // in seq order; the forest keeps at most one
	kids     *kidIndex // children by first string equality, once many (kids.go)
	entries  []entry   // every subscription, once there are two or more
}

// children returns the node's children in seq order (valid until its
// edges change).
func (n *node) children() []*node {
	if n.more == nil {
		return nil
	}
	return n.more.children
}

// parents returns the node's parents in seq order (valid until its
// edges change).
func (n *node) parents() []*node {
	if n.more == nil {
		return nil
	}
	return n.more.parents
}

// kids returns the node's child index, nil until it has many children.
func (n *node) kids() *kidIndex {
	if n.more == nil {
		return nil
	}
	return n.more.kids
}

// grow returns n.more, allocating it if needed.
func (n *node) grow() *nodeMore {
	if n.more == nil {
		n.more = &nodeMore{}
	}
	return n.more
}

// tidy drops n.more once it holds nothing.
func (n *node) tidy() {
	if m := n.more; m != nil && len(m.children) == 0 && len(m.parents) == 0 && m.kids == nil && len(m.entries) == 0 {
		n.more = nil
	}
}

// subs calls yield on each of the node's subscriptions, in the order they
// were added, until yield returns false.
func (n *node) subs(yield func(entry) bool) {
	if n.hasOne {
		yield(entry{id: n.oneID, from: n.oneFrom})
		return
	}
	if n.more != nil {
		for _, e := range n.more.entries {
			if !yield(e) {
				return
			}
		}
	}
}

// nsubs returns the number of the node's subscriptions.
func (n *node) nsubs() int {
	switch {
	case n.hasOne:
		return 1
	case n.more != nil:
		return len(n.more.entries)
	}
	return 0
}

// firstSub returns the node's earliest subscription, if it has one.
func (n *node) firstSub() (entry, bool) {
	for e := range n.subs {
		return e, true
	}
	return entry{}, false
}

// addSub adds subscription e after the node's others.
func (n *node) addSub(e entry) {
	switch {
	case n.hasOne:
		m := n.grow()
		m.entries = append(m.entries, entry{id: n.oneID, from: n.oneFrom}, e)
		n.hasOne, n.oneID, n.oneFrom = false, 0, 0
	case n.more != nil && len(n.more.entries) > 0:
		n.more.entries = append(n.more.entries, e)
	default:
		n.hasOne, n.oneID, n.oneFrom = true, e.id, e.from
	}
}

// removeSub removes subscription id; it reports whether the node held it.
// The order of the others stays.
func (n *node) removeSub(id match.ID) bool {
	if n.hasOne {
		if n.oneID != id {
			return false
		}
		n.hasOne, n.oneID, n.oneFrom = false, 0, 0
		return true
	}
	if n.more == nil {
		return false
	}
	es := n.more.entries
	i := slices.IndexFunc(es, func(e entry) bool { return e.id == id })
	if i < 0 {
		return false
	}
	es = slices.Delete(es, i, i+1)
	if len(es) == 1 {
		n.hasOne, n.oneID, n.oneFrom = true, es[0].id, es[0].from
		es = nil
	}
	n.more.entries = es
	n.tidy()
	return true
}

// filter returns the node's representative filter.
func (n *node) filter() match.Filter { return n.key.f }

// holds reports whether subscription id is one of the node's.
func (n *node) holds(id match.ID) bool {
	for e := range n.subs {
		if e.id == id {
			return true
		}
	}
	return false
}

// isRoot reports whether the node has no parent.
func (n *node) isRoot() bool { return len(n.parents()) == 0 }

// ifaces appends the distinct interfaces of the node's subscriptions.
func (n *node) ifaces(dst []Iface) []Iface {
	for e := range n.subs {
		if !slices.Contains(dst, e.from) {
			dst = append(dst, e.from)
		}
	}
	return dst
}

// addEdge links p above c, keeping both lists in seq order.
func addEdge(p, c *node) {
	pm, cm := p.grow(), c.grow()
	n := len(pm.children)
	pm.children = insertBySeq(pm.children, c)
	cm.parents = insertBySeq(cm.parents, p)
	if len(pm.children) > n {
		indexKids(p, c, true)
	}
}

// removeEdge unlinks p and c; it reports whether the edge existed.
func removeEdge(p, c *node) bool {
	if p.more == nil {
		return false
	}
	var ok bool
	p.more.children, ok = removeBySeq(p.more.children, c)
	if ok {
		c.more.parents, _ = removeBySeq(c.more.parents, p)
		indexKids(p, c, false)
		c.tidy()
		p.tidy()
	}
	return ok
}

func hasEdge(p, c *node) bool {
	_, ok := findBySeq(p.children(), c)
	return ok
}

func cmpSeq(a *node, seq uint64) int {
	switch {
	case a.seq < seq:
		return -1
	case a.seq > seq:
		return 1
	}
	return 0
}

func findBySeq(list []*node, n *node) (int, bool) {
	return slices.BinarySearchFunc(list, n.seq, cmpSeq)
}

func insertBySeq(list []*node, n *node) []*node {
	if len(list) == 0 || list[len(list)-1].seq < n.seq {
		return append(list, n)
	}
	i, found := findBySeq(list, n)
	if found {
		return list
	}
	return slices.Insert(list, i, n)
}

func removeBySeq(list []*node, n *node) ([]*node, bool) {
	i, found := findBySeq(list, n)
	if !found {
		return list, false
	}
	return slices.Delete(list, i, i+1), true
}
