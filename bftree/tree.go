package bftree

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/match/bloom"
)

// indexAt is the number of children above which a node keeps a map from
// part to child, so that inserting under a wide node is not linear.
const indexAt = 16

// Tree is a bftree: stored m-bit filters split into h parts of m/h bits,
// each filter a root-to-leaf path with one node per part, identical
// prefixes shared. It implements bloom.Tree. It is not safe for concurrent
// use (Match reuses a scratch buffer).
type Tree struct {
	m, h   int
	w      int // bits per part
	pw     int // words per part
	root   *node
	n      int
	nodes  int
	sparts []uint64 // scratch: parts of a stored filter
	eparts []uint64 // scratch: parts of an event summary
}

// node is one part of one or more stored filters. Its children's parts
// are packed in parts, pw words per child, in the order of kids.
type node struct {
	parts []uint64
	kids  []*node
	index map[string]int // part bytes -> child slot, when wide
	srcs  bloom.Sources  // at leaves (depth h)
}

// New returns an empty tree of filters of m bits split into h parts; m
// must be a positive multiple of h.
func New(m, h int) (*Tree, error) {
	if m <= 0 || h <= 0 || m%h != 0 {
		return nil, fmt.Errorf("bftree: m = %d is not a positive multiple of h = %d", m, h)
	}
	w := m / h
	pw := (w + 63) / 64
	return &Tree{
		m: m, h: h, w: w, pw: pw,
		root:   &node{},
		nodes:  1,
		sparts: make([]uint64, h*pw),
		eparts: make([]uint64, h*pw),
	}, nil
}

// Len returns the number of stored (filter, source) references.
func (t *Tree) Len() int { return t.n }

// Nodes returns the number of nodes, the imaginary root included.
func (t *Tree) Nodes() int { return t.nodes }

// Insert stores filter s for src.
func (t *Tree) Insert(s *bitset.BitSet, src uint64) {
	t.split(s.Words(), t.sparts)
	n := t.root
	for i := range t.h {
		n = t.child(n, t.part(t.sparts, i), true)
	}
	n.srcs.Add(src)
	t.n++
}

// Delete drops one reference to (s, src), pruning nodes left empty.
func (t *Tree) Delete(s *bitset.BitSet, src uint64) error {
	t.split(s.Words(), t.sparts)
	path := make([]*node, 0, t.h+1)
	path = append(path, t.root)
	for i := range t.h {
		c := t.child(path[i], t.part(t.sparts, i), false)
		if c == nil {
			return errNotStored
		}
		path = append(path, c)
	}
	if !path[t.h].srcs.Remove(src) {
		return errNotStored
	}
	t.n--
	for i := t.h; i > 0 && len(path[i].kids) == 0 && path[i].srcs.Len() == 0; i-- {
		t.removeChild(path[i-1], t.part(t.sparts, i-1))
	}
	return nil
}

var errNotStored = errors.New("bftree: filter not stored for this source")

// Match appends the sources of every stored filter contained in e.
func (t *Tree) Match(e *bitset.BitSet, dst []uint64) []uint64 {
	t.split(e.Words(), t.eparts)
	return t.walk(t.root, 0, dst)
}

// walk visits the children of n at depth d whose part the event's part
// d contains.
func (t *Tree) walk(n *node, d int, dst []uint64) []uint64 {
	ep := t.part(t.eparts, d)
	for j := next(ep, n.parts, t.pw, 0); j >= 0; j = next(ep, n.parts, t.pw, j+1) {
		if kid := n.kids[j]; d+1 == t.h {
			dst = kid.srcs.AppendTo(dst)
		} else {
			dst = t.walk(kid, d+1, dst)
		}
	}
	return dst
}

// MatchAny reports whether some stored filter is contained in e, stopping
// at the first: a router with one tree per link asks only that.
func (t *Tree) MatchAny(e *bitset.BitSet) bool {
	t.split(e.Words(), t.eparts)
	return t.any(t.root, 0)
}

func (t *Tree) any(n *node, d int) bool {
	ep := t.part(t.eparts, d)
	for j := next(ep, n.parts, t.pw, 0); j >= 0; j = next(ep, n.parts, t.pw, j+1) {
		if d+1 == t.h || t.any(n.kids[j], d+1) {
			return true // leaves always hold a source: delete prunes empty ones
		}
	}
	return false
}

// part returns part i of split filter words.
func (t *Tree) part(parts []uint64, i int) []uint64 { return parts[i*t.pw : (i+1)*t.pw] }

// split copies the h parts of an m-bit filter into dst, each part
// starting at a word boundary.
func (t *Tree) split(words, dst []uint64) {
	for i := range t.h {
		extract(words, i*t.w, t.w, t.part(dst, i))
	}
}

// extract copies bits [off, off+w) of src into dst (low bits first).
func extract(src []uint64, off, w int, dst []uint64) {
	for j := range dst {
		o := off + 64*j
		q, r := o/64, uint(o%64)
		x := src[q] >> r
		if r != 0 && q+1 < len(src) {
			x |= src[q+1] << (64 - r)
		}
		if rest := w - 64*j; rest < 64 {
			x &= 1<<uint(rest) - 1
		}
		dst[j] = x
	}
}

// child finds the child of n with the given part, creating it if asked.
func (t *Tree) child(n *node, part []uint64, create bool) *node {
	if j, ok := t.slot(n, part); ok {
		return n.kids[j]
	}
	if !create {
		return nil
	}
	c := &node{}
	n.parts = append(n.parts, part...)
	n.kids = append(n.kids, c)
	t.nodes++
	if n.index != nil {
		n.index[partKey(part)] = len(n.kids) - 1
	} else if len(n.kids) > indexAt {
		n.index = make(map[string]int, len(n.kids))
		for j := range n.kids {
			n.index[partKey(n.parts[j*t.pw:(j+1)*t.pw])] = j
		}
	}
	return c
}

// slot returns the slot of n's child with the given part.
func (t *Tree) slot(n *node, part []uint64) (int, bool) {
	if n.index != nil {
		j, ok := n.index[partKey(part)]
		return j, ok
	}
	for j := range n.kids {
		if equalWords(n.parts[j*t.pw:(j+1)*t.pw], part) {
			return j, true
		}
	}
	return 0, false
}

// removeChild removes n's child with the given part, moving the last
// child into its slot.
func (t *Tree) removeChild(n *node, part []uint64) {
	j, _ := t.slot(n, part)
	last := len(n.kids) - 1
	if n.index != nil {
		delete(n.index, partKey(part))
		if j != last {
			n.index[partKey(n.parts[last*t.pw:(last+1)*t.pw])] = j
		}
	}
	copy(n.parts[j*t.pw:(j+1)*t.pw], n.parts[last*t.pw:(last+1)*t.pw])
	n.kids[j] = n.kids[last]
	n.kids[last] = nil
	n.parts, n.kids = n.parts[:last*t.pw], n.kids[:last]
	t.nodes--
}

func partKey(part []uint64) string {
	b := make([]byte, 0, 8*len(part))
	for _, w := range part {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return string(b)
}

func equalWords(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
