package sbstree

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/match/bloom"
)

// Tree is an sbstree: each stored filter is the ascending list of its set
// bit positions, stored as a trie path with one node per set bit; a node
// holds the sources of the filters whose list ends there. It implements
// bloom.Tree. It is not safe for concurrent use.
type Tree struct {
	m     int
	root  *node
	n     int
	nodes int
	path  []uint32 // scratch: set bits of a filter
}

// node stands for one set bit (the root for none). Children are kept
// sorted by bit, in two parallel slices, so that lookups binary-search
// and the match loop scans a dense array of uint16.
type node struct {
	bits []uint16
	kids []*node
	mask []uint64 // bits as a bitmap, for nodes with many children (dense.go)
	srcs bloom.Sources
}

// New returns an empty tree of filters of m bits (m <= 65536).
func New(m int) (*Tree, error) {
	if m <= 0 || m > 1<<16 {
		return nil, fmt.Errorf("sbstree: m = %d outside [1, 65536]", m)
	}
	return &Tree{m: m, root: &node{}, nodes: 1}, nil
}

// Len returns the number of stored (filter, source) references.
func (t *Tree) Len() int { return t.n }

// Nodes returns the number of nodes, the root included.
func (t *Tree) Nodes() int { return t.nodes }

// Insert stores filter s for src.
func (t *Tree) Insert(s *bitset.BitSet, src uint64) {
	n := t.root
	for _, b := range t.setBits(s) {
		n = t.child(n, uint16(b), true)
	}
	n.srcs.Add(src)
	t.n++
}

var errNotStored = errors.New("sbstree: filter not stored for this source")

// Delete drops one reference to (s, src), pruning nodes left empty.
func (t *Tree) Delete(s *bitset.BitSet, src uint64) error {
	bits := t.setBits(s)
	path := make([]*node, 0, len(bits)+1)
	path = append(path, t.root)
	for _, b := range bits {
		c := t.child(path[len(path)-1], uint16(b), false)
		if c == nil {
			return errNotStored
		}
		path = append(path, c)
	}
	if !path[len(path)-1].srcs.Remove(src) {
		return errNotStored
	}
	t.n--
	for i := len(path) - 1; i > 0 && len(path[i].kids) == 0 && path[i].srcs.Len() == 0; i-- {
		t.removeChild(path[i-1], uint16(bits[i-1]))
	}
	return nil
}

// Match appends the sources of every stored filter contained in e.
func (t *Tree) Match(e *bitset.BitSet, dst []uint64) []uint64 {
	return walk(t.root, e.Words(), dst)
}

// walk collects n's sources and descends into every child whose bit is
// set in the event summary ew.
func walk(n *node, ew []uint64, dst []uint64) []uint64 {
	dst = n.srcs.AppendTo(dst)
	if n.mask != nil {
		return denseWalk(n, ew, dst)
	}
	for j, b := range n.bits {
		if ew[b>>6]&(1<<(b&63)) != 0 {
			dst = walk(n.kids[j], ew, dst)
		}
	}
	return dst
}

// MatchAny reports whether some stored filter is contained in e, stopping
// at the first: a router with one tree per link asks only that.
func (t *Tree) MatchAny(e *bitset.BitSet) bool {
	return anyWalk(t.root, e.Words())
}

func anyWalk(n *node, ew []uint64) bool {
	if n.srcs.Len() > 0 {
		return true
	}
	if n.mask != nil {
		return denseAny(n, ew)
	}
	for j, b := range n.bits {
		if ew[b>>6]&(1<<(b&63)) != 0 && anyWalk(n.kids[j], ew) {
			return true
		}
	}
	return false
}

// setBits returns the ascending set bit positions of s (a scratch buffer).
func (t *Tree) setBits(s *bitset.BitSet) []uint32 {
	t.path = t.path[:0]
	for i, ok := s.NextSet(0); ok; i, ok = s.NextSet(i + 1) {
		t.path = append(t.path, uint32(i))
	}
	return t.path
}

// child finds n's child for bit b, creating it if asked.
func (t *Tree) child(n *node, b uint16, create bool) *node {
	j, found := slices.BinarySearch(n.bits, b)
	if found {
		return n.kids[j]
	}
	if !create {
		return nil
	}
	c := &node{}
	n.bits = slices.Insert(n.bits, j, b)
	n.kids = slices.Insert(n.kids, j, c)
	n.addDense(b, (t.m+63)/64)
	t.nodes++
	return c
}

func (t *Tree) removeChild(n *node, b uint16) {
	j, _ := slices.BinarySearch(n.bits, b)
	n.bits = slices.Delete(n.bits, j, j+1)
	n.kids = slices.Delete(n.kids, j, j+1)
	n.removeDense(b)
	t.nodes--
}
