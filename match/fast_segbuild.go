package match

import (
	"cmp"
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// segBuilder collects subscriptions, from filters or from the live part of
// existing segments, and builds one segment of them.
type segBuilder struct {
	ids   []ID
	attrs map[string]*attrBuilder
}

// attrBuilder collects an attribute's constraints during a build.
type attrBuilder struct {
	has            []uint32
	num, bool_     dimBuilder[float64]
	str            dimBuilder[string]
	hasNum, hasStr bool
	hasBool        bool
}

func newSegBuilder() *segBuilder { return &segBuilder{attrs: make(map[string]*attrBuilder)} }

func (b *segBuilder) attr(name string) *attrBuilder {
	a := b.attrs[name]
	if a == nil {
		a = &attrBuilder{}
		b.attrs[name] = a
	}
	return a
}

// addFilter files a satisfiable filter's constraints, summarised in sets,
// under the next slot.
func (b *segBuilder) addFilter(id ID, f Filter, sets attrSets) {
	slot := uint32(len(b.ids))
	b.ids = append(b.ids, id)
	i := 0
	for k := range sets {
		attr, set := sets[k].attr, sets[k].set
		j := i
		for j < len(f.cs) && f.cs[j].Attr == attr {
			j++
		}
		cs := f.cs[i:j:j]
		i = j
		a := b.attr(attr)
		a.has = append(a.has, slot)
		switch set.cls {
		case classNumber:
			a.hasNum = true
			a.num.add(slot, &set, cs, numberKey)
		case classString:
			a.hasStr = true
			a.str.add(slot, &set, cs, stringKey)
		case classBool:
			a.hasBool = true
			a.bool_.add(slot, &set, cs, boolKey)
		}
	}
}

// addSegment adds the live subscriptions of s, read back from its indexed
// form (segments keep no copy of the filters), under the next slots.
func (b *segBuilder) addSegment(s *segment) {
	remap := make([]int32, s.n)
	for slot := range s.n {
		remap[slot] = -1
		if s.live.Test(uint(slot)) {
			remap[slot] = int32(len(b.ids))
			b.ids = append(b.ids, s.id(slot))
		}
	}
	for i := range s.attrs {
		sa := &s.attrs[i]
		a := b.attr(sa.name)
		sa.has.each(func(slot uint32) {
			if r := remap[slot]; r >= 0 {
				a.has = append(a.has, uint32(r))
			}
		})
		if sa.num != nil {
			a.hasNum = true
			readDim(&a.num, sa.num, remap, func(k float64) float64 { return k })
		}
		if sa.num32 != nil {
			a.hasNum = true
			readDim(&a.num, sa.num32, remap, func(k float32) float64 { return float64(k) })
		}
		if sa.str != nil {
			a.hasStr = true
			readDim(&a.str, sa.str, remap, func(k string) string { return k })
		}
		if sa.bool != nil {
			a.hasBool = true
			readDim(&a.bool_, sa.bool, remap, func(k float64) float64 { return k })
		}
	}
}

// readDim adds a built dimension's live constraints to a builder. An
// interval without any bound (a string interval from `prefix ""`, or `!=`
// alone) needs no entry: the has set keeps its type and ne its excluded
// values.
func readDim[K, J cmp.Ordered](dst *dimBuilder[K], d *dim[J], remap []int32, conv func(J) K) {
	d.has.each(func(slot uint32) {
		if r := remap[slot]; r >= 0 {
			dst.has = append(dst.has, uint32(r))
		}
	})
	for k, pt := range d.eq {
		for _, s := range pt.slots {
			if r := remap[s]; r >= 0 {
				dst.eq = append(dst.eq, keyed[K]{conv(k), uint32(r)})
			}
		}
	}
	for k, pt := range d.points {
		for s := pt.span.lo; s < pt.span.hi; s++ {
			if r := remap[s]; r >= 0 {
				dst.eq = append(dst.eq, keyed[K]{conv(k), uint32(r)})
			}
		}
	}
	for k, set := range d.ne {
		set.each(func(s uint32) {
			if r := remap[s]; r >= 0 {
				dst.ne = append(dst.ne, keyed[K]{conv(k), uint32(r)})
			}
		})
	}
	for _, x := range d.extras {
		if r := remap[x.slot]; r >= 0 {
			x.slot = uint32(r)
			dst.extras = append(dst.extras, x)
		}
	}
	// A dimension's cells hold its bounds in key order: one sorted run each.
	dst.loRuns = append(dst.loRuns, len(dst.los))
	dst.hiRuns = append(dst.hiRuns, len(dst.his))
	for c := range d.lo {
		readBounds(&dst.los, &d.lo[c], remap, conv)
		readBounds(&dst.his, &d.hi[c], remap, conv)
	}
}

// readBounds adds the live bounds of a list, renumbered, keeping open marks.
func readBounds[K, J cmp.Ordered](dst *[]keyed[K], b *boundList[J], remap []int32, conv func(J) K) {
	for i, s := range b.slots {
		if r := remap[s&^openBit]; r >= 0 {
			*dst = append(*dst, keyed[K]{conv(b.keys[i]), uint32(r) | s&openBit})
		}
	}
}

// build indexes everything collected.
func (b *segBuilder) build(cfg *FastConfig) *segment {
	n := len(b.ids)
	s := &segment{live: bitset.New(uint(n)), nlive: n, pivot: -1}
	pivot := b.choosePivot()
	var spans map[string]slotSpan
	if pivot != "" {
		s.rest, spans = b.pivotOrder(pivot)
		b.attrs[pivot].str.pivot = true
	}
	s.setIDs(b.ids)
	s.live.FlipRange(0, uint(n))
	names := make([]string, 0, len(b.attrs))
	for name := range b.attrs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ab := b.attrs[name]
		a := segAttr{name: name, has: newSlotSet(ab.has, n)}
		if ab.hasNum {
			if b32, ok := narrowKeys(&ab.num); ok {
				a.num32 = b32.build(n, cfg)
			} else {
				a.num = ab.num.build(n, cfg)
			}
		}
		if ab.hasStr {
			a.str = ab.str.build(n, cfg)
			if name == pivot {
				a.str.setPoints(spans)
				s.pivot = len(s.attrs)
			}
		}
		if ab.hasBool {
			a.bool = ab.bool_.build(n, cfg)
		}
		a.shareHas(len(ab.has))
		s.attrs = append(s.attrs, a)
	}
	return s
}
