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
//
// Two things keep a bulk load's builder near the size of the index it
// builds. Numbers go to num32, with float32 keys (8 bytes a bound instead
// of 16), until a key that float32 cannot hold exactly arrives; then num32
// is widened into num once. And while every subscription on the attribute
// has one type class, the class's dimension keeps no list of its own
// subscriptions: it is has (see mixed).
type attrBuilder struct {
	has            []uint32
	num, bool_     dimBuilder[float64]
	num32          dimBuilder[float32]
	str            dimBuilder[string]
	hasNum, hasStr bool
	hasBool        bool
	wide           bool // numbers are in num, not num32
	// first is the class of the first subscription; until mixed, every
	// subscription in has is of that class and the dimension builders'
	// has lists stay empty.
	first class
	mixed bool
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
		a.note(set.cls)
		a.has = append(a.has, slot)
		track := a.mixed
		switch set.cls {
		case classNumber:
			a.hasNum = true
			if !a.wide && !fitsFloat32(&set) {
				a.widen()
			}
			if a.wide {
				a.num.add(slot, &set, cs, numberKey, track)
			} else {
				a.num32.add(slot, &set, cs, number32Key, track)
			}
		case classString:
			a.hasStr = true
			a.str.add(slot, &set, cs, stringKey, track)
		case classBool:
			a.hasBool = true
			a.bool_.add(slot, &set, cs, boolKey, track)
		}
	}
}

// note records that the next subscription on the attribute is of class
// cls, making the attribute mixed at the first one of another class.
func (a *attrBuilder) note(cls class) {
	switch {
	case a.mixed:
	case len(a.has) == 0:
		a.first = cls
	case cls != a.first:
		a.markMixed()
	}
}

// markMixed gives the dimension builders their own has lists from now on:
// the class of the subscriptions so far gets a copy of has.
func (a *attrBuilder) markMixed() {
	if a.mixed {
		return
	}
	a.mixed = true
	if len(a.has) == 0 {
		return
	}
	so := slices.Clone(a.has)
	switch a.first {
	case classNumber:
		if a.wide {
			a.num.has = so
		} else {
			a.num32.has = so
		}
	case classString:
		a.str.has = so
	case classBool:
		a.bool_.has = so
	}
}

// dimHas returns the subscriptions of a dimension builder of the attribute.
func (a *attrBuilder) dimHas(own []uint32) []uint32 {
	if a.mixed {
		return own
	}
	return a.has
}

// widen moves the numbers collected with float32 keys to float64 keys.
func (a *attrBuilder) widen() {
	a.wide = true
	b := &a.num32
	conv := func(kvs []keyed[float32]) []keyed[float64] {
		out := make([]keyed[float64], len(kvs))
		for i, kv := range kvs {
			out[i] = keyed[float64]{float64(kv.key), kv.slot}
		}
		return out
	}
	a.num = dimBuilder[float64]{has: b.has, extras: b.extras,
		los: conv(b.los), his: conv(b.his), eq: conv(b.eq), ne: conv(b.ne),
		loRuns: b.loRuns, hiRuns: b.hiRuns, fresh: b.fresh}
	a.num32 = dimBuilder[float32]{}
}

// fitsFloat32 reports whether every key a number set gives its dimension
// is held exactly by a float32 (keys a float64 cannot hold go to extras
// either way).
func fitsFloat32(s *attrSet) bool {
	fits := func(v Value) bool {
		f, ok := exactFloat(v)
		return !ok || float64(float32(f)) == f
	}
	if s.loConstrains() && !fits(s.lo.v) || s.hi.set && !fits(s.hi.v) {
		return false
	}
	for _, v := range s.ne {
		if !fits(v) {
			return false
		}
	}
	return true
}

func number32Key(v Value) (float32, bool) {
	f, ok := exactFloat(v)
	return float32(f), ok
}

// addSegment adds the live subscriptions of s, read back from its indexed
// form (segments keep no copy of the filters), under the next slots.
func (b *segBuilder) addSegment(s *segment) { b.addSegmentWhere(s, nil) }

// addSegmentWhere is addSegment of the live subscriptions whose id keep
// accepts (all, when keep is nil).
func (b *segBuilder) addSegmentWhere(s *segment, keep func(ID) bool) {
	remap := make([]int32, s.n)
	for slot := range s.n {
		remap[slot] = -1
		if s.live.Test(uint(slot)) && (keep == nil || keep(s.id(slot))) {
			remap[slot] = int32(len(b.ids))
			b.ids = append(b.ids, s.id(slot))
		}
	}
	for i := range s.attrs {
		sa := &s.attrs[i]
		a := b.attr(sa.name)
		a.markMixed()
		sa.has.each(func(slot uint32) {
			if r := remap[slot]; r >= 0 {
				a.has = append(a.has, uint32(r))
			}
		})
		if sa.num != nil {
			a.hasNum = true
			if !a.wide {
				a.widen()
			}
			readDim(&a.num, sa.num, remap, func(k float64) float64 { return k })
		}
		if sa.num32 != nil {
			a.hasNum = true
			if a.wide {
				readDim(&a.num, sa.num32, remap, func(k float32) float64 { return float64(k) })
			} else {
				readDim(&a.num32, sa.num32, remap, func(k float32) float32 { return k })
			}
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
	if d.points != nil {
		for i, k := range d.points.keys {
			sp := d.points.spans[i]
			for s := sp.lo; s < sp.hi; s++ {
				if r := remap[s]; r >= 0 {
					dst.eq = append(dst.eq, keyed[K]{conv(k), uint32(r)})
				}
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
	for i := range b.nslots() {
		s := b.slot(i)
		if r := remap[s&^openBit]; r >= 0 {
			*dst = append(*dst, keyed[K]{conv(b.key(i)), uint32(r) | s&openBit})
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
	if s.ids32 != nil {
		b.ids = nil
	}
	s.live.FlipRange(0, uint(n))
	names := make([]string, 0, len(b.attrs))
	for name, a := range b.attrs {
		if len(a.has) == 0 { // presized, then never used
			delete(b.attrs, name)
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ab := b.attrs[name]
		delete(b.attrs, name) // what is built is dropped as the build goes
		a := segAttr{name: name, has: newSlotSet(ab.has, n)}
		if ab.hasNum {
			switch {
			case !ab.wide:
				a.num32 = ab.num32.build(ab.dimHas(ab.num32.has), n, cfg)
			default:
				if b32, ok := narrowKeys(&ab.num); ok {
					a.num32 = b32.build(ab.dimHas(b32.has), n, cfg)
				} else {
					a.num = ab.num.build(ab.dimHas(ab.num.has), n, cfg)
				}
			}
		}
		if ab.hasStr {
			a.str = ab.str.build(ab.dimHas(ab.str.has), n, cfg)
			if name == pivot {
				a.str.setPoints(spans)
				s.pivot = len(s.attrs)
			}
		}
		if ab.hasBool {
			a.bool = ab.bool_.build(ab.dimHas(ab.bool_.has), n, cfg)
		}
		a.shareHas(len(ab.has))
		s.attrs = append(s.attrs, a)
	}
	return s
}

// listSizes is the length of an attribute's lists in a builder: its
// subscriptions and its number dimension's lower and upper bounds.
type listSizes struct{ has, los, his int }

// sizes returns the length of b's lists by attribute, for presize.
func (b *segBuilder) sizes() map[string]listSizes {
	m := make(map[string]listSizes, len(b.attrs))
	for name, a := range b.attrs {
		m[name] = listSizes{has: len(a.has), los: len(a.num32.los), his: len(a.num32.his)}
	}
	return m
}

// presize gives an empty builder's lists the capacity of sizes scaled by
// frac (at most 1), and ids room for n: the next segment of a load sized
// like the last one allocates its lists once, instead of growing them by
// appends that leave a quarter unused and, on the way, about three times
// the final size in copies for the collector.
func (b *segBuilder) presize(sizes map[string]listSizes, n int, frac float64) {
	scale := func(k int) int { return int(float64(k)*frac) + 16 }
	b.ids = make([]ID, 0, scale(n))
	for name, s := range sizes {
		a := b.attr(name)
		a.has = make([]uint32, 0, scale(s.has))
		if s.los > 0 {
			a.num32.los = make([]keyed[float32], 0, scale(s.los))
		}
		if s.his > 0 {
			a.num32.his = make([]keyed[float32], 0, scale(s.his))
		}
	}
}
