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
type node struct {
	key      key
	text     string    // canonical text of key.f
	seq      uint64    // creation order; siblings are kept in seq order
	children []*node   // in seq order
	kids     *kidIndex // children by first string equality, once many (kids.go)
	parents  []*node   // the forest keeps at most one
	entries  []entry

	// Per-operation scratch, valid while mark equals the structure's epoch.
	mark uint64

	// The fields of a byte or four last, packed into one word: a node is
	// allocated in the size class its size rounds up to, so padding
	// between fields costs a size class (16 bytes) at every node.
	ipos                  int32 // position in the candidate index holding the node
	pinned                bool  // a fixed filter (FF): stays without subscriptions
	upDone, up, downDone  bool  // per-operation scratch (mark)
	down, queued, visited bool
}

// filter returns the node's representative filter.
func (n *node) filter() match.Filter { return n.key.f }

// holds reports whether subscription id is one of the node's.
func (n *node) holds(id match.ID) bool {
	return slices.ContainsFunc(n.entries, func(e entry) bool { return e.id == id })
}

// isRoot reports whether the node has no parent.
func (n *node) isRoot() bool { return len(n.parents) == 0 }

// ifaces appends the distinct interfaces of the node's subscriptions.
func (n *node) ifaces(dst []Iface) []Iface {
	for _, e := range n.entries {
		if !slices.Contains(dst, e.from) {
			dst = append(dst, e.from)
		}
	}
	return dst
}

// addEdge links p above c, keeping both lists in seq order.
func addEdge(p, c *node) {
	n := len(p.children)
	p.children = insertBySeq(p.children, c)
	c.parents = insertBySeq(c.parents, p)
	if len(p.children) > n {
		indexKids(p, c, true)
	}
}

// removeEdge unlinks p and c; it reports whether the edge existed.
func removeEdge(p, c *node) bool {
	var ok bool
	p.children, ok = removeBySeq(p.children, c)
	if ok {
		c.parents, _ = removeBySeq(c.parents, p)
		indexKids(p, c, false)
	}
	return ok
}

func hasEdge(p, c *node) bool {
	_, ok := findBySeq(p.children, c)
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
