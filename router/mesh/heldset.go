package mesh

import (
	"cmp"
	"slices"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// heldSet is what a link holds from its peer: each distinct filter once
// (the parsed, compacted form the routing table and the core's link
// table share), with how many copies the peer sent.
//
// Why not a map by canonical text: with 10^6 filters behind a link the
// text (a key header and its bytes) and a pointer to a separate entry
// were ~70 of the ~110 bytes the set spent per filter. Entries are kept by
// value under the filter's witness (wire.FilterHash of its canonical
// text); a filter whose witness another held filter has already is kept
// in more, so colliding witnesses stay exact.
type heldSet struct {
	first  map[uint64]heldFilter   // the first filter held under each witness
	more   map[uint64][]heldFilter // further filters with the same witness
	copies int                     // copies held, over all filters
	hash   func(string) uint64     // wire.FilterHash (tests: one that collides)
}

func newHeldSet() heldSet {
	return heldSet{first: make(map[uint64]heldFilter), more: make(map[uint64][]heldFilter), hash: wire.FilterHash}
}

// count returns the copies of f held.
func (s *heldSet) count(f match.Filter) int {
	w := s.hash(f.String())
	if h, ok := s.first[w]; ok && h.f.Equal(f) {
		return h.n
	}
	for _, h := range s.more[w] {
		if h.f.Equal(f) {
			return h.n
		}
	}
	return 0
}

// add changes the copies of f held by n (negative: removed), forgetting
// f at zero. The caller never takes the count below zero.
func (s *heldSet) add(f match.Filter, n int) {
	s.copies += n
	w := s.hash(f.String())
	h, ok := s.first[w]
	switch {
	case !ok:
		s.first[w] = heldFilter{f: f, n: n}
	case h.f.Equal(f):
		if h.n += n; h.n != 0 {
			s.first[w] = h
			return
		}
		delete(s.first, w)
		if more := s.more[w]; len(more) > 0 { // a colliding filter moves up
			s.first[w] = more[0]
			s.setMore(w, more[1:])
		}
	default:
		s.addMore(w, f, n)
	}
}

// addMore is add for a filter whose witness the first filter held
// under w has too.
func (s *heldSet) addMore(w uint64, f match.Filter, n int) {
	more := s.more[w]
	i := slices.IndexFunc(more, func(h heldFilter) bool { return h.f.Equal(f) })
	if i < 0 {
		s.more[w] = append(more, heldFilter{f: f, n: n})
		return
	}
	if more[i].n += n; more[i].n == 0 {
		s.setMore(w, slices.Delete(more, i, i+1))
	}
}

func (s *heldSet) setMore(w uint64, more []heldFilter) {
	if len(more) == 0 {
		delete(s.more, w)
		return
	}
	s.more[w] = more
}

// distinct returns the number of distinct filters held.
func (s *heldSet) distinct() int {
	n := len(s.first)
	for _, more := range s.more {
		n += len(more)
	}
	return n
}

// sorted returns every distinct filter held with its count and canonical
// text, in text order (what is done with all of them is deterministic).
func (s *heldSet) sorted() []textCount {
	out := make([]textCount, 0, s.distinct())
	for _, h := range s.first {
		out = append(out, textCount{h.f.String(), h})
	}
	for _, more := range s.more {
		for _, h := range more {
			out = append(out, textCount{h.f.String(), h})
		}
	}
	slices.SortFunc(out, func(a, b textCount) int { return cmp.Compare(a.text, b.text) })
	return out
}

// textCount is a held filter with its canonical text.
type textCount struct {
	text string
	heldFilter
}
