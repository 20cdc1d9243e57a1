package match

import (
	"cmp"
	"math"
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// A dim indexes the constraints of one segment on one (attribute, type
// class) dimension: numbers and bools use float64 keys, strings string keys.
// Every subscription with constraints of that class on the attribute is in
// has; its constraints are stored in exactly one of three forms:
//
//   - a point (`==`): eq maps the value to the subscriptions wanting it,
//     eqAll holds them all; for a value wanted by more than a quarter as
//     many subscriptions as eqAll has words, the value's miss mask is
//     eqAll without them, so an event with that value fails the other
//     points with one pass over the words instead of merging its points
//     into a pass over eqAll (on the segment's pivot dimension, points
//     instead);
//   - an interval (from <, <=, >, >=, prefix, with optional != points): the
//     key range is cut into cells; fail[c] holds the subscriptions whose
//     interval misses cell c entirely, lo[c] and hi[c] the bounds that fall
//     inside cell c, sorted, to be compared with the event value;
//   - anything else (suffix, contains, numbers a float64 cannot hold
//     exactly): extras, checked one by one with the exact semantics.
//
// `!=` values of points and intervals are in ne, each value's slots as a
// sorted list or, when they are many, a bitset.
type dim[K cmp.Ordered] struct {
	has    slotSet
	bounds []K // len(cells)-1 ascending cell boundaries
	fail   []*bitset.BitSet
	lo, hi []boundList[K]
	eq     map[K]eqPoint
	eqAll  slotSet
	ne     map[K]slotSet
	extras []extraPred
	// points replaces eq and eqAll on the segment's pivot
	// dimension: it gives the slots wanting each point value, and where
	// the value falls among the interval bounds (see fast_pivot.go). The
	// window leaves out every other point, so the points need no matching
	// pass there.
	points *pointTable[K]
}

// eqPoint is a point value's subscriptions, sorted, and when they are
// many its miss mask (see dim).
type eqPoint struct {
	slots []uint32
	miss  []uint64
}

// boundList holds interval bounds sorted by key; the top bit of a slot marks
// an open (strict) bound. The keys are in keys, or, when they are all
// integers (see packOffsets), in off: each key as its offset from the base
// of its run, a run being keys within 65,535 of its first; 2 bytes a bound
// instead of 4 or 8.
type boundList[K cmp.Ordered] struct {
	keys  []K
	off   []uint16
	runs  []offRun
	slots []uint32
	s24   []byte // instead of slots in a segment of few enough slots (see packSlots)
}

// key returns the i-th key.
func (b *boundList[K]) key(i int) K {
	if b.off == nil {
		return b.keys[i]
	}
	r := b.runs[runOf(b.runs, i)]
	return floatKey[K](r.base + float64(b.off[i]))
}

// cut returns where p splits the list's keys (see probe.cut).
func (b *boundList[K]) cut(p *probe[K]) boundCut {
	if b.off == nil {
		return p.cut(b.keys)
	}
	return cutOffsets(b, p)
}

const openBit = 1 << 31

// extraPred is a subscription's constraints on a dimension checked exactly.
type extraPred struct {
	slot uint32
	set  attrSet
	cs   []Constraint
}

// probe is an event value as a dimension key. When the key type cannot hold
// the value exactly (an int64 beyond 2^53 as a float64, most floats as a
// float32), key is the nearest key, inexact is set, and comparisons fall
// back to the exact value v.
type probe[K cmp.Ordered] struct {
	key     K
	inexact bool
	v       *Value
}

// cmpKey compares the probed value with a key exactly.
func (p *probe[K]) cmpKey(k K) int {
	if p.inexact {
		return compareNumbers(*p.v, Value{kind: KindFloat, bits: floatBits(keyFloat(k))})
	}
	return cmp.Compare(p.key, k)
}

// keyFloat returns a numeric key as a float64 (exactly).
func keyFloat[K cmp.Ordered](k K) float64 {
	switch k := any(k).(type) {
	case float64:
		return k
	case float32:
		return float64(k)
	}
	return 0
}

// failInto marks in fail the subscriptions of the dimension that the event
// value p fails, at least inside the window win.
func (d *dim[K]) failInto(p *probe[K], win *window, fail []uint64) {
	if len(d.eq) > 0 {
		d.failEq(p, win, fail)
	}
	if len(d.ne) > 0 && !p.inexact {
		win.orSlots(fail, d.ne[p.key])
	}
	if len(d.lo) > 0 {
		var c int
		var lo, hi boundCut
		if d.points != nil && win.hasPoint {
			c, lo, hi = int(win.point.cell), win.point.lo, win.point.hi
		} else {
			c = p.upperBound(d.bounds)
			lo, hi = d.lo[c].cut(p), d.hi[c].cut(p)
		}
		if d.fail != nil {
			win.orWords(fail, d.fail[c].Words())
		}
		d.lo[c].failBelow(lo, fail)
		d.hi[c].failAbove(hi, fail)
	}
	for i := range d.extras {
		x := &d.extras[i]
		if !x.set.admits(p.value()) {
			fail[x.slot>>6] |= 1 << (x.slot & 63)
		}
	}
}

// failEq marks every point subscription whose value differs from p.
func (d *dim[K]) failEq(p *probe[K], win *window, fail []uint64) {
	var hits []uint32
	if !p.inexact {
		pt := d.eq[p.key]
		if pt.miss != nil {
			win.orWords(fail, pt.miss)
			return
		}
		hits = pt.slots
	}
	if d.eqAll.bits != nil {
		win.orWordsExcept(fail, d.eqAll.bits.Words(), hits)
		return
	}
	win.setSlotsExcept(fail, d.eqAll.list, hits)
}

// upperBound returns the number of keys at most p (keys ascending).
func (p *probe[K]) upperBound(keys []K) int {
	lo, hi := 0, len(keys)
	if !p.inexact {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if keys[m] <= p.key {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.cmpKey(keys[m]) >= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// lowerBound returns the number of keys below p (keys ascending). It
// differs from upperBound only by its comparisons; one search taking the
// operator as a flag measured about 5% (float64 keys) to 15% (strings)
// slower per search, and sharing only the inexact loop 1-2% slower on
// FastMatchStock/roots-of-10000, so the two stay separate.
func (p *probe[K]) lowerBound(keys []K) int {
	lo, hi := 0, len(keys)
	if !p.inexact {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if keys[m] < p.key {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.cmpKey(keys[m]) > 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// equalRun returns the end of the run of keys equal to p from i.
func (p *probe[K]) equalRun(keys []K, i int) int {
	if !p.inexact {
		for i < len(keys) && keys[i] == p.key {
			i++
		}
		return i
	}
	for i < len(keys) && p.cmpKey(keys[i]) == 0 {
		i++
	}
	return i
}

// boundCut splits a sorted bound list at a value: keys [0, below) are
// less than it, keys [below, upTo) equal to it, the others greater.
type boundCut struct{ below, upTo int32 }

// cut returns where p splits the sorted keys.
func (p *probe[K]) cut(keys []K) boundCut {
	i := p.lowerBound(keys)
	return boundCut{int32(i), int32(p.equalRun(keys, i))}
}

// failBelow marks lower bounds the value does not reach: key > v, or key ==
// v with an open bound.
func (b *boundList[K]) failBelow(at boundCut, fail []uint64) {
	if b.s24 != nil {
		markOpen24(b.s24, at.below, at.upTo, fail)
		markAll24(b.s24, at.upTo, int32(b.nslots()), fail)
		return
	}
	for _, s := range b.slots[at.below:at.upTo] {
		if s&openBit != 0 {
			s &^= openBit
			fail[s>>6] |= 1 << (s & 63)
		}
	}
	for _, s := range b.slots[at.upTo:] {
		s &^= openBit
		fail[s>>6] |= 1 << (s & 63)
	}
}

// failAbove marks upper bounds the value exceeds: key < v, or key == v with
// an open bound.
func (b *boundList[K]) failAbove(at boundCut, fail []uint64) {
	if b.s24 != nil {
		markAll24(b.s24, 0, at.below, fail)
		markOpen24(b.s24, at.below, at.upTo, fail)
		return
	}
	for _, s := range b.slots[:at.below] {
		s &^= openBit
		fail[s>>6] |= 1 << (s & 63)
	}
	for _, s := range b.slots[at.below:at.upTo] {
		if s&openBit != 0 {
			s &^= openBit
			fail[s>>6] |= 1 << (s & 63)
		}
	}
}

// value returns the probed value (for exact checks).
func (p *probe[K]) value() Value { return *p.v }

// sortBoundList sorts a bound list by key.
func sortBoundList[K cmp.Ordered](b *boundList[K]) {
	if keys, ok := any(b.keys).([]float32); ok {
		sortFloat32Bounds(keys, b.slots)
		return
	}
	pairs := make([]keyed[K], len(b.keys))
	for i := range pairs {
		pairs[i] = keyed[K]{b.keys[i], b.slots[i]}
	}
	slices.SortFunc(pairs, func(x, y keyed[K]) int { return cmp.Compare(x.key, y.key) })
	for i, p := range pairs {
		b.keys[i], b.slots[i] = p.key, p.slot
	}
}

// sortFloat32Bounds sorts float32 keys with their slots in place, packing
// each pair into one uint64 whose order is the key's order, so the sort
// compares integers.
func sortFloat32Bounds(keys []float32, slots []uint32) {
	packed := make([]uint64, len(keys))
	for i, k := range keys {
		packed[i] = uint64(orderedFloat32Bits(k))<<32 | uint64(slots[i])
	}
	slices.Sort(packed)
	for i, p := range packed {
		keys[i] = math.Float32frombits(unorderFloat32Bits(uint32(p >> 32)))
		slots[i] = uint32(p)
	}
}

// orderedFloat32Bits maps a float32 to a uint32 with the same order
// (negative numbers reversed below positive ones; -0 just below +0, which
// the callers' comparisons treat as equal keys anyway).
func orderedFloat32Bits(f float32) uint32 {
	b := math.Float32bits(f)
	if b&(1<<31) != 0 {
		return ^b
	}
	return b | 1<<31
}

func unorderFloat32Bits(u uint32) uint32 {
	if u&(1<<31) != 0 {
		return u &^ (1 << 31)
	}
	return ^u
}
