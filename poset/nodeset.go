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
//
// Removal leaves a dead entry in place (dead[i]) instead of shifting the
// slices: a shift costs the set's size, and removing every member of a
// large set (a client with 10^5 subscriptions leaving, a link dropping)
// was quadratic. Dead entries are compacted away, in one pass, when they
// outnumber the live ones or when the list is read (members).
type nodeSet struct {
	list     []*node
	dead     []bool
	ndead    int
	n        int // live members
	filters  []match.Filter
	texts    []string
	idx      *candIndex
	indexing bool
	cached   bool
}

func (s *nodeSet) add(n *node) {
	i, found := findBySeq(s.list, n)
	if found {
		if !s.dead[i] {
			return
		}
		s.dead[i] = false
		s.ndead--
	} else {
		s.list = slices.Insert(s.list, i, n)
		s.dead = slices.Insert(s.dead, i, false)
		if s.cached {
			s.filters = slices.Insert(s.filters, i, n.key.f)
			s.texts = slices.Insert(s.texts, i, n.text)
		}
	}
	s.n++
	switch {
	case s.idx != nil:
		s.idx.add(n)
	case s.indexing && s.n >= indexThreshold:
		s.idx = newCandIndex()
		for _, m := range s.members() {
			s.idx.add(m)
		}
	}
}

func (s *nodeSet) remove(n *node) {
	i, found := findBySeq(s.list, n)
	if !found || s.dead[i] {
		return
	}
	s.dead[i] = true
	s.ndead++
	s.n--
	if s.idx != nil {
		s.idx.remove(n)
	}
	if s.ndead > s.n && s.ndead >= indexThreshold {
		s.compact()
	}
}

// compact drops the dead entries.
func (s *nodeSet) compact() {
	if s.ndead == 0 {
		return
	}
	j := 0
	for i, n := range s.list {
		if s.dead[i] {
			continue
		}
		s.list[j], s.dead[j] = n, false
		if s.cached {
			s.filters[j], s.texts[j] = s.filters[i], s.texts[i]
		}
		j++
	}
	clear(s.list[j:])
	s.list, s.dead = s.list[:j], s.dead[:j]
	if s.cached {
		clear(s.filters[j:])
		clear(s.texts[j:])
		s.filters, s.texts = s.filters[:j], s.texts[:j]
	}
	s.ndead = 0
}

// members returns the live members in seq order (valid until the set
// changes).
func (s *nodeSet) members() []*node {
	s.compact()
	return s.list
}

// cache returns the live members' filters and texts, in seq order (the
// set must be cached).
func (s *nodeSet) cache() ([]match.Filter, []string) {
	s.compact()
	return s.filters, s.texts
}

func (s *nodeSet) len() int { return s.n }

// coverers appends, in seq order, the members that may cover u.
func (s *nodeSet) coverers(u *node, dst []*node) []*node {
	if s.idx == nil {
		return append(dst, s.members()...)
	}
	return s.idx.coverers(u, dst)
}

// covered appends, in seq order, the members that u may cover.
func (s *nodeSet) covered(u *node, dst []*node) []*node {
	if s.idx == nil {
		return append(dst, s.members()...)
	}
	return s.idx.covered(u, dst)
}
