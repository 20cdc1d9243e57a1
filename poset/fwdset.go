package poset

import "github.com/sift-pubsub/sift/match"

// fwdSet is a neighbour's forwarding set: for each node that forwards
// there, the filter it forwards. That filter is nearly always the node's
// own (key.f; desired picks another only for a node whose subscriptions
// from other interfaces all use an equivalent filter of another text), so
// those nodes are a set (a nodeTable, a pointer and a tag byte a
// position) and only the others map to their filter: a router between
// two others forwards nearly every filter it holds, and a map slot (node
// and filter header, 32 bytes, in groups at most 7/8 full) per filter was
// the largest thing its table held beside the nodes.
type fwdSet struct {
	own   nodeTable              // nodes forwarding their own filter (nodeKey)
	other map[*node]match.Filter // nodes forwarding another
}

func newFwdSet() *fwdSet { return &fwdSet{own: newNodeTable(nodeKey)} }

// get returns the filter w forwards, if it forwards one.
func (s *fwdSet) get(w *node) (match.Filter, bool) {
	if f, ok := s.other[w]; ok {
		return f, true
	}
	if s.own.has(w) {
		return w.key.f, true
	}
	return match.Filter{}, false
}

// put records that w forwards f (in place of what it forwarded).
func (s *fwdSet) put(w *node, f match.Filter) {
	s.del(w)
	if f.Equal(w.key.f) {
		s.own.add(w)
		return
	}
	if s.other == nil {
		s.other = make(map[*node]match.Filter)
	}
	s.other[w] = f
}

// del records that w forwards nothing.
func (s *fwdSet) del(w *node) {
	if _, ok := s.other[w]; ok {
		delete(s.other, w)
		return
	}
	s.own.remove(w)
}

// len returns the number of nodes that forward a filter.
func (s *fwdSet) len() int { return s.own.len() + len(s.other) }

// filters appends every forwarded filter, in no particular order (none
// for a nil set: an interface that is not a neighbour).
func (s *fwdSet) filters(dst []match.Filter) []match.Filter {
	if s == nil {
		return dst
	}
	for w := range s.own.all {
		dst = append(dst, w.key.f)
	}
	for _, f := range s.other {
		dst = append(dst, f)
	}
	return dst
}
