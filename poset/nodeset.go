package poset

// indexThreshold is the size from which a node set builds its candidate
// index; smaller sets are scanned.
const indexThreshold = 32

// nodeSet is a set of nodes kept in seq order, with a candidate index once
// it is large enough (when allowed).
type nodeSet struct {
	list     []*node
	idx      *candIndex
	indexing bool
}

func (s *nodeSet) add(n *node) {
	s.list = insertBySeq(s.list, n)
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
	var ok bool
	if s.list, ok = removeBySeq(s.list, n); ok && s.idx != nil {
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
