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
//
// Paths are compressed: a run of nodes with one child and no sources is
// kept as one node whose run lists the bits after its first, so a walk
// reads a short array instead of chasing a pointer per bit.
type Tree struct {
	m     int
	root  *node
	n     int
	nodes int      // trie nodes, one per bit of a run
	path  []uint32 // scratch: set bits of a filter
}

// node stands for its edge's bit and then every bit of run (the root for
// none). Children are kept sorted by their edge's bit, in two parallel
// slices, so that lookups binary-search and the match loop scans a dense
// array of uint16. A node other than the root has sources or at least two
// children: runs are maximal (Insert splits them, Delete merges them).
type node struct {
	run  []uint16 // bits after the edge's, ascending; all must be set
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

// Nodes returns the number of trie nodes, the root included: one per set
// bit of a stored path, however runs compress them.
func (t *Tree) Nodes() int { return t.nodes }

// Insert stores filter s for src.
func (t *Tree) Insert(s *bitset.BitSet, src uint64) {
	n, rest := t.root, t.setBits(s)
	for len(rest) > 0 {
		c := n.child(uint16(rest[0]))
		if c == nil { // the rest of the path is a new run
			c = &node{run: toRun(rest[1:])}
			t.addChild(n, uint16(rest[0]), c)
			t.nodes += len(rest)
			n = c
			break
		}
		rest = rest[1:]
		p := commonRun(c.run, rest)
		if p < len(c.run) {
			split(c, p)
		}
		n, rest = c, rest[p:]
	}
	n.srcs.Add(src)
	t.n++
}

var errNotStored = errors.New("sbstree: filter not stored for this source")

// Delete drops one reference to (s, src), pruning nodes left empty and
// merging runs left unbranched.
func (t *Tree) Delete(s *bitset.BitSet, src uint64) error {
	rest := t.setBits(s)
	path := []*node{t.root}
	var edge []uint16 // edge[i]: the bit of path[i+1] under path[i]
	for len(rest) > 0 {
		c := path[len(path)-1].child(uint16(rest[0]))
		if c == nil || len(rest)-1 < len(c.run) || commonRun(c.run, rest[1:]) < len(c.run) {
			return errNotStored
		}
		edge = append(edge, uint16(rest[0]))
		path = append(path, c)
		rest = rest[1+len(c.run):]
	}
	last := path[len(path)-1]
	if !last.srcs.Remove(src) {
		return errNotStored
	}
	t.n--
	i := len(path) - 1
	if i > 0 && len(last.kids) == 0 && last.srcs.Len() == 0 {
		t.nodes -= 1 + len(last.run)
		path[i-1].removeChild(edge[i-1])
		i--
	}
	if i > 0 {
		merge(path[i])
	}
	return nil
}

// Match appends the sources of every stored filter contained in e.
func (t *Tree) Match(e *bitset.BitSet, dst []uint64) []uint64 {
	return walk(t.root, e.Words(), dst)
}

// walk collects n's sources and descends into every child whose bit is
// set in the event summary ew, when n's run is set too.
func walk(n *node, ew []uint64, dst []uint64) []uint64 {
	if !runSet(n.run, ew) {
		return dst
	}
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
	if !runSet(n.run, ew) {
		return false
	}
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

// runSet reports whether every bit of run is set in ew.
func runSet(run []uint16, ew []uint64) bool {
	for _, b := range run {
		if ew[b>>6]&(1<<(b&63)) == 0 {
			return false
		}
	}
	return true
}

// setBits returns the ascending set bit positions of s (a scratch buffer).
func (t *Tree) setBits(s *bitset.BitSet) []uint32 {
	t.path = t.path[:0]
	for i, ok := s.NextSet(0); ok; i, ok = s.NextSet(i + 1) {
		t.path = append(t.path, uint32(i))
	}
	return t.path
}

// child returns n's child for bit b, or nil.
func (n *node) child(b uint16) *node {
	if j, found := slices.BinarySearch(n.bits, b); found {
		return n.kids[j]
	}
	return nil
}

// addChild adds c as n's child for bit b (absent).
func (t *Tree) addChild(n *node, b uint16, c *node) {
	j, _ := slices.BinarySearch(n.bits, b)
	n.bits = slices.Insert(n.bits, j, b)
	n.kids = slices.Insert(n.kids, j, c)
	n.addDense(b, (t.m+63)/64)
}

// removeChild removes n's child for bit b (present).
func (n *node) removeChild(b uint16) {
	j, _ := slices.BinarySearch(n.bits, b)
	n.bits = slices.Delete(n.bits, j, j+1)
	n.kids = slices.Delete(n.kids, j, j+1)
	n.removeDense(b)
}

// split cuts c's run before its p-th bit: c keeps run[:p] and gets one
// child, for run[p], holding the rest of the run and everything c held.
func split(c *node, p int) {
	tail := &node{run: slices.Clone(c.run[p+1:]), bits: c.bits, kids: c.kids, mask: c.mask, srcs: c.srcs}
	b := c.run[p]
	*c = node{run: c.run[:p:p], bits: []uint16{b}, kids: []*node{tail}}
}

// merge folds n's only child into n when n holds no sources (n is not the
// root), so that runs stay maximal after a delete.
func merge(n *node) {
	if n.srcs.Len() > 0 || len(n.kids) != 1 {
		return
	}
	c := n.kids[0]
	run := append(append(slices.Clip(n.run), n.bits[0]), c.run...)
	*n = node{run: run, bits: c.bits, kids: c.kids, mask: c.mask, srcs: c.srcs}
}

// commonRun returns the length of the common prefix of run and rest.
func commonRun(run []uint16, rest []uint32) int {
	p := 0
	for p < len(run) && p < len(rest) && uint32(run[p]) == rest[p] {
		p++
	}
	return p
}

func toRun(bits []uint32) []uint16 {
	run := make([]uint16, len(bits))
	for i, b := range bits {
		run[i] = uint16(b)
	}
	return run
}
