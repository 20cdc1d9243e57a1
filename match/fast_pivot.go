package match

import (
	"cmp"
	"slices"
)

// A segment's pivot is the string attribute on which most of its
// subscriptions want one value (a stock symbol, a topic). The build
// numbers the slots so that the subscriptions without a point on it come
// first, then those of each point value together. An event with value v can
// then match only the first span and v's span: matching works on the words
// of that window alone (see window), skipping the bitset words of every
// other value and the pass that fails the other points.
//
// Caveats: only string dimensions pivot (numeric points, such as integer
// topic ids, do not yet); a segment has at most one pivot, so the
// subscriptions without a point on it are in every event's window; and
// Match's ids come in slot order, i.e. the first span's, then the value's.

// pivotShare: a string dimension becomes the pivot only when at least
// 1/pivotShare of the segment's subscriptions have a point on it, so that
// the window leaves out a good part of the segment.
const pivotShare = 4

// choosePivot returns the attribute whose string dimension holds the most
// points, if they are numerous enough, or "".
func (b *segBuilder) choosePivot() string {
	best, most := "", 0
	for name, a := range b.attrs {
		n := len(a.str.eq)
		if n > most || n == most && n > 0 && name < best {
			best, most = name, n
		}
	}
	if most == 0 || most*pivotShare < len(b.ids) {
		return ""
	}
	return best
}

// pivotOrder renumbers the collected slots for the pivot attribute name:
// the subscriptions without a point on its string dimension first (slots
// [0, rest)), then those of each point value, in one span per value.
func (b *segBuilder) pivotOrder(name string) (rest uint32, spans map[string]slotSpan) {
	eq := b.attrs[name].str.eq
	group := make(map[string]int32) // value -> group number
	var sizes []uint32
	of := make([]int32, len(b.ids)) // slot -> group number + 1, 0 for the rest
	for _, kv := range eq {
		g, ok := group[kv.key]
		if !ok {
			g = int32(len(sizes))
			group[kv.key] = g
			sizes = append(sizes, 0)
		}
		sizes[g]++
		of[kv.slot] = g + 1
	}
	rest = uint32(len(b.ids) - len(eq))  // a subscription has at most one point
	next := make([]uint32, len(sizes)+1) // next free slot by group number + 1; the rest from 0
	start := rest
	for g, size := range sizes {
		next[g+1] = start
		start += size
	}
	spans = make(map[string]slotSpan, len(group))
	for k, g := range group {
		spans[k] = slotSpan{next[g+1], next[g+1] + sizes[g]}
	}
	perm := make([]uint32, len(b.ids))
	for slot, g := range of {
		perm[slot] = next[g]
		next[g]++
	}
	b.renumber(perm)
	return rest, spans
}

// renumber moves every collected slot s to perm[s].
func (b *segBuilder) renumber(perm []uint32) {
	ids := make([]ID, len(b.ids))
	for s, id := range b.ids {
		ids[perm[s]] = id
	}
	b.ids = ids
	for _, a := range b.attrs {
		renumberSlots(a.has, perm)
		renumberDim(&a.num, perm)
		renumberDim(&a.num32, perm)
		renumberDim(&a.bool_, perm)
		renumberDim(&a.str, perm)
	}
}

// renumberDim renumbers the slots a dimension builder holds, keeping the
// open marks of bounds.
func renumberDim[K cmp.Ordered](d *dimBuilder[K], perm []uint32) {
	renumberSlots(d.has, perm)
	for _, kvs := range [][]keyed[K]{d.los, d.his, d.eq, d.ne} {
		for i := range kvs {
			s := kvs[i].slot
			kvs[i].slot = perm[s&^openBit] | s&openBit
		}
	}
	for i := range d.extras {
		d.extras[i].slot = perm[d.extras[i].slot]
	}
}

// renumberSlots renumbers a list of slots and sorts it again when it is
// short enough to stay a list in its slotSet (a bitset needs no order).
func renumberSlots(slots []uint32, perm []uint32) {
	for i, s := range slots {
		slots[i] = perm[s]
	}
	if listed(len(slots), len(perm)) {
		slices.Sort(slots)
	}
}

// pivotPoint is what matching needs about one point value of the pivot
// dimension, computed at build time: the span of the subscriptions
// wanting it, and where the value falls among the dimension's interval
// bounds (its cell, and its cuts of that cell's bound lists), so that an
// event carrying the value compares no key.
type pivotPoint struct {
	span   slotSpan
	cell   int32
	lo, hi boundCut
}

// setPoints records the pivot points of a built dimension.
func (d *dim[K]) setPoints(spans map[K]slotSpan) {
	d.points = newPointTable[K](len(spans), len(d.lo) > 0)
	for k, sp := range spans {
		var c pointCut
		if len(d.lo) > 0 {
			p := probe[K]{key: k}
			cell := p.upperBound(d.bounds)
			c = pointCut{cell: int32(cell), lo: d.lo[cell].cut(&p), hi: d.hi[cell].cut(&p)}
		}
		d.points.add(k, sp, c)
	}
}
