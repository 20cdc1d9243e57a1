package poset

import (
	"maps"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// merger keeps one neighbour's merged forwarding set up to date as the
// unmerged forwarding set changes, one filter at a time.
//
// The merged set is a set of items. Each item stands for some unmerged
// filters (its sources) and its filter matches exactly the union of the
// events they match: an item is either one unmerged filter, or the perfect
// merge (match.Merge, perfect) of two items. The sources of the items
// partition the unmerged set, so the merged set matches exactly what the
// unmerged set matches.
//
// Invariant after every add and remove: no two items merge perfectly
// under match.Merge: none covers another (match.Covers) and no two
// constrain every attribute identically but one, on which their intervals
// touch or overlap.
//
// Adding a filter makes it an item and settles it: while some item covers
// it, it joins that item; otherwise it absorbs every item it covers and
// merges with a one-attribute partner, and the result settles again.
// Removing a filter dissolves the item standing for it and settles its
// other sources again, one by one, in the order they joined, unless one of
// them alone is the item's filter (the item covered it and still does). Partners are
// found without looking at every item: covering candidates come from a
// candidate index (candIndex: attribute masks and boxes), one-attribute
// partners from groups keyed by the attribute and the exact constraints on
// every other attribute. Filters outside the complete fragment (suffix,
// contains), which the index does not hold, are compared with every item:
// each costs time linear in the merged set.
//
// The unmerged set is a multiset: a forest may forward one text from two
// equivalent nodes in different branches. A text added again is only
// counted (extra), and a removal while it is counted only uncounts it.
//
// The merger is deterministic: the same sequence of adds and removes gives
// the same items and the same changes.
type merger struct {
	bySource map[string]*mitem // unmerged filter text -> item standing for it
	extra    map[string]int    // unmerged texts held more than once -> copies beyond the first
	byNode   map[*node]*mitem
	idx      *candIndex         // items in the complete fragment
	loose    []*mitem           // the other items
	groups   map[string]*mgroup // one-attribute merge key -> items
	seq      uint64             // creation order of items
	delta    map[string]change  // merged filter text -> its net change since flush
	scratch  []*node
}

// change is a merged filter's net change since the last flush: +1 added,
// -1 removed, 0 none (added and removed again, or the reverse).
type change struct {
	f match.Filter
	d int
}

// mitem is one merged filter with the unmerged filters it stands for.
type mitem struct {
	n       *node // the filter's key and seq, and its candidate-index position
	sources []match.Filter
	gkeys   []string // the groups holding the item
	lpos    int      // position in merger.loose, when not exact
}

func (it *mitem) filter() match.Filter { return it.n.key.f }

func newMerger() *merger {
	return &merger{
		bySource: make(map[string]*mitem),
		extra:    make(map[string]int),
		byNode:   make(map[*node]*mitem),
		idx:      newCandIndex(),
		groups:   make(map[string]*mgroup),
		delta:    make(map[string]change),
	}
}

// remove takes one copy of unmerged filter f out. When another copy stays,
// nothing changes. When another source of the item standing for f equals
// the item's filter, the item still matches exactly its remaining sources
// and only forgets f; otherwise the item is dissolved and its other
// sources settle again. Removing a filter the merger does not hold does
// nothing.
func (m *merger) remove(f match.Filter) {
	t := f.String()
	it := m.bySource[t]
	if it == nil {
		return
	}
	if n := m.extra[t]; n > 0 {
		if n == 1 {
			delete(m.extra, t)
		} else {
			m.extra[t] = n - 1
		}
		return
	}
	delete(m.bySource, t)
	it.sources = slices.DeleteFunc(it.sources, f.Equal)
	if slices.ContainsFunc(it.sources, it.filter().Equal) {
		return
	}
	m.drop(it)
	for _, s := range it.sources {
		m.readd(s)
	}
}

// filtersSorted returns the merged filters in canonical order.
func (m *merger) filtersSorted() []match.Filter {
	out := make([]match.Filter, 0, len(m.byNode))
	for n := range m.byNode {
		out = append(out, n.key.f)
	}
	slices.SortFunc(out, match.Filter.Compare)
	return out
}

// flush returns the merged filters removed and added since the last
// flush (each list in canonical order) and starts a new batch.
func (m *merger) flush() (removed, added []match.Filter) {
	for _, c := range m.delta {
		switch {
		case c.d < 0:
			removed = append(removed, c.f)
		case c.d > 0:
			added = append(added, c.f)
		}
	}
	clear(m.delta)
	slices.SortFunc(removed, match.Filter.Compare)
	slices.SortFunc(added, match.Filter.Compare)
	return removed, added
}

// add merges unmerged filter f (satisfiable) into the set; a filter held
// already is only counted again.
func (m *merger) add(f match.Filter) {
	t := f.String()
	if m.bySource[t] != nil {
		m.extra[t]++
		return
	}
	m.readd(f)
}

// readd makes f, which no item stands for, an item and settles it.
func (m *merger) readd(f match.Filter) {
	x := &mitem{n: m.newNode(f), sources: []match.Filter{f}}
	m.bySource[f.String()] = x
	m.settle(x)
}

func (m *merger) newNode(f match.Filter) *node {
	m.seq++
	return &node{key: newKey(f), seq: m.seq}
}

// settle places a new item: it joins an item covering it, or absorbs the
// items it covers and merges with one-attribute partners until none is
// left, and then enters the set.
func (m *merger) settle(x *mitem) {
	for {
		if y := m.coverer(x); y != nil {
			if len(x.sources) <= len(y.sources) {
				m.moveSources(y, x)
				return
			}
			m.drop(y) // x carries the sources and y's filter
			m.insert(m.absorb(x, y, y.n))
			return
		}
		for _, y := range m.covered(x) {
			m.drop(y)
			x = m.absorb(x, y, x.n)
		}
		y, z, ok := m.partner(x)
		if !ok {
			break
		}
		m.drop(y)
		x = m.absorb(x, y, m.newNode(z))
	}
	m.insert(x)
}

// absorb gathers the sources of a and b (both out of the set) into the one
// with more, which takes filter node n and is returned: only the smaller
// side's sources are re-pointed, so over any sequence of merges a source
// moves O(log n) times.
func (m *merger) absorb(a, b *mitem, n *node) *mitem {
	if len(b.sources) > len(a.sources) {
		a, b = b, a
	}
	a.n = n
	m.moveSources(a, b)
	return a
}

// moveSources appends src's sources to dst's and points them at dst.
func (m *merger) moveSources(dst, src *mitem) {
	dst.sources = append(dst.sources, src.sources...)
	for _, s := range src.sources {
		m.bySource[s.String()] = dst
	}
}

// coverer returns an item covering x, if any: the first in creation order
// among the candidate index's items, else among the loose ones.
func (m *merger) coverer(x *mitem) *mitem {
	f := x.filter()
	if x.n.key.exact {
		m.scratch = m.idx.coverers(x.n, m.scratch[:0])
		for _, n := range m.scratch {
			if match.Covers(n.key.f, f) {
				return m.byNode[n]
			}
		}
	}
	var found *mitem
	m.eachLoose(x, func(y *mitem) bool {
		if match.Covers(y.filter(), f) {
			found = y
		}
		return found != nil
	})
	return found
}

// covered returns the items x covers: the candidate index's in creation
// order, then the loose ones in creation order.
func (m *merger) covered(x *mitem) []*mitem {
	f := x.filter()
	var out []*mitem
	if x.n.key.exact {
		m.scratch = m.idx.covered(x.n, m.scratch[:0])
		for _, n := range m.scratch {
			if match.Covers(f, n.key.f) {
				out = append(out, m.byNode[n])
			}
		}
	}
	m.eachLoose(x, func(y *mitem) bool {
		if match.Covers(f, y.filter()) {
			out = append(out, y)
		}
		return false
	})
	return out
}

// eachLoose visits, in creation order, the loose items, or every item when
// x is loose, until visit returns true.
func (m *merger) eachLoose(x *mitem, visit func(*mitem) bool) {
	var list []*mitem
	if x.n.key.exact {
		list = slices.Clone(m.loose)
	} else {
		list = slices.Collect(maps.Values(m.byNode))
	}
	slices.SortFunc(list, func(a, b *mitem) int { return cmpSeq(a.n, b.n.seq) })
	for _, y := range list {
		if visit(y) {
			return
		}
	}
}

// partner returns the first item y, in x's groups in attribute order,
// that merges perfectly with x, and the merged filter.
func (m *merger) partner(x *mitem) (y *mitem, z match.Filter, ok bool) {
	f := x.filter()
	for _, k := range groupKeys(f) {
		g := m.groups[k]
		if g == nil {
			continue
		}
		g.candidates(x, func(c *mitem) bool {
			z, ok = match.Merge(f, c.filter())
			y = c
			return ok
		})
		if ok {
			return y, z, true
		}
	}
	return nil, match.Filter{}, false
}

// insert enters a settled item into the set and its indexes.
func (m *merger) insert(x *mitem) {
	m.byNode[x.n] = x
	if x.n.key.exact {
		m.idx.add(x.n)
	} else {
		x.lpos = len(m.loose)
		m.loose = append(m.loose, x)
	}
	f := x.filter()
	x.gkeys = groupKeys(f)
	for i, k := range x.gkeys {
		g := m.groups[k]
		if g == nil {
			g = newMgroup(f.Attrs()[i])
			m.groups[k] = g
		}
		g.add(x)
	}
	m.note(x.filter(), +1)
}

// drop takes an item out of the set and its indexes; its sources still
// point at it until the caller moves them.
func (m *merger) drop(y *mitem) {
	delete(m.byNode, y.n)
	if y.n.key.exact {
		m.idx.remove(y.n)
	} else {
		last := m.loose[len(m.loose)-1]
		m.loose[y.lpos], last.lpos = last, y.lpos
		m.loose = m.loose[:len(m.loose)-1]
	}
	for _, k := range y.gkeys {
		g := m.groups[k]
		if g.remove(y); g.empty() {
			delete(m.groups, k)
		}
	}
	m.note(y.filter(), -1)
}

func (m *merger) note(f match.Filter, d int) {
	t := f.String()
	m.delta[t] = change{f: f, d: m.delta[t].d + d}
}
