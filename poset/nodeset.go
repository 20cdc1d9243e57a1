package poset

import (
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// indexThreshold is the size from which a node set builds its candidate
// index; smaller sets are scanned.
const indexThreshold = 32

// nodeSet is a set of nodes kept in seq order, with (when cached) their
// filters and texts alongside, so RTO can send a layer without visiting
// its nodes, and a candidate index once it is large enough (when
// allowed). Only the roots are cached: RTO sends no other set whole, and
// two slices alongside every node would cost 40 bytes a node.
type nodeSet struct {
	list     []*node
	filters  []match.Filter
	texts    []string
	idx      *candIndex
	indexing bool
	cached   bool
}

func (s *nodeSet) add(n *node) {
	i, found := findBySeq(s.list, n)
	if found {
		return
	}
	s.list = slices.Insert(s.list, i, n)
	if s.cached {
		s.filters = slices.Insert(s.filters, i, n.key.f)
		s.texts = slices.Insert(s.texts, i, n.text)
	}
	switch {
	case s.idx != nil:
		s.idx.add(n)
	case s.indexing && len(s.list) >= indexThreshold:
		s.idx = newCandIndex()
		for _, m := range s.list {
			s.idx.add(m)
		}
	}
}

func (s *nodeSet) remove(n *node) {
	i, found := findBySeq(s.list, n)
	if !found {
		return
	}
	s.list = slices.Delete(s.list, i, i+1)
	if s.cached {
		s.filters = slices.Delete(s.filters, i, i+1)
		s.texts = slices.Delete(s.texts, i, i+1)
	}
	if s.idx != nil {
		s.idx.remove(n)
	}
}

func (s *nodeSet) len() int { return len(s.list) }

// coverers appends, in seq order, the members that may cover u.
func (s *nodeSet) coverers(u *node, dst []*node) []*node {
	if s.idx == nil {
		return append(dst, s.list...)
	}
	return s.idx.coverers(u, dst)
}

// covered appends, in seq order, the members that u may cover.
func (s *nodeSet) covered(u *node, dst []*node) []*node {
	if s.idx == nil {
		return append(dst, s.list...)
	}
	return s.idx.covered(u, dst)
}
