package match

import (
	"cmp"
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// interval is one subscription's interval on a dimension during a build.
type interval[K cmp.Ordered] struct {
	slot           uint32
	lo, hi         K
	loSet, hiSet   bool
	loOpen, hiOpen bool
}

type keyed[K cmp.Ordered] struct {
	key  K
	slot uint32
}

// dimBuilder collects a dimension's constraints before the build.
type dimBuilder[K cmp.Ordered] struct {
	has       []uint32
	intervals []interval[K]
	eq, ne    []keyed[K]
	extras    []extraPred
}

// add records one subscription's constraints on the dimension. keyOf maps a
// value of the dimension's class to its key, reporting false when the key
// would not be exact.
func (b *dimBuilder[K]) add(slot uint32, s *attrSet, cs []Constraint, keyOf func(Value) (K, bool)) {
	b.has = append(b.has, slot)
	ne := make([]K, 0, len(s.ne))
	exact := len(s.suffixes) == 0 && len(s.contains) == 0
	for _, v := range s.ne {
		k, ok := keyOf(v)
		exact = exact && ok
		ne = append(ne, k)
	}
	// The least string "" as a closed lower bound constrains nothing.
	loSet := s.lo.set && !(s.cls == classString && s.lo.v.str == "" && !s.lo.open)
	iv := interval[K]{slot: slot, loSet: loSet, hiSet: s.hi.set, loOpen: s.lo.open, hiOpen: s.hi.open}
	if loSet {
		k, ok := keyOf(s.lo.v)
		iv.lo, exact = k, exact && ok
	}
	if s.hi.set {
		k, ok := keyOf(s.hi.v)
		iv.hi, exact = k, exact && ok
	}
	if !exact {
		b.extras = append(b.extras, extraPred{slot: slot, set: *s, cs: cs})
		return
	}
	for _, k := range ne {
		b.ne = append(b.ne, keyed[K]{k, slot})
	}
	if _, point := s.point(); point {
		b.eq = append(b.eq, keyed[K]{iv.lo, slot})
		return
	}
	b.intervals = append(b.intervals, iv)
}

// build turns the collected constraints into a dimension over n slots.
func (b *dimBuilder[K]) build(n int, cfg *FastConfig) *dim[K] {
	d := &dim[K]{has: newSlotSet(b.has, n), extras: b.extras}
	if len(b.eq) > 0 {
		d.eq = groupKeyed(b.eq)
		all := make([]uint32, len(b.eq))
		for i, kv := range b.eq {
			all[i] = kv.slot
		}
		slices.Sort(all)
		d.eqAll = newSlotSet(all, n)
	}
	if len(b.ne) > 0 {
		d.ne = groupKeyed(b.ne)
	}
	if len(b.intervals) > 0 {
		d.buildCells(b.intervals, n, cfg)
	}
	return d
}

func groupKeyed[K cmp.Ordered](kvs []keyed[K]) map[K][]uint32 {
	m := make(map[K][]uint32)
	for _, kv := range kvs {
		m[kv.key] = append(m[kv.key], kv.slot)
	}
	return m
}

// buildCells chooses cell boundaries at quantiles of the bounds, then files
// each interval's bounds in their cells and marks the cells it misses.
func (d *dim[K]) buildCells(ivs []interval[K], n int, cfg *FastConfig) {
	cells := min(cfg.MaxCells, max(1, len(ivs)/cfg.BoundsPerCell))
	d.bounds = quantileBounds(ivs, cells)
	cells = len(d.bounds) + 1
	d.lo = make([]boundList[K], cells)
	d.hi = make([]boundList[K], cells)
	// Slots whose interval starts above cell c fail there, as do slots whose
	// interval ends below it: bucket slots by the cell of each bound, then
	// accumulate the buckets from both ends, a bitset OR per cell.
	above := make([][]uint32, cells) // bucket by the cell of the lower bound
	below := make([][]uint32, cells) // bucket by the cell of the upper bound
	for _, iv := range ivs {
		if iv.loSet {
			c := d.cellOf(iv.lo)
			d.lo[c].add(iv.lo, iv.slot, iv.loOpen)
			above[c] = append(above[c], iv.slot)
		}
		if iv.hiSet {
			c := d.cellOf(iv.hi)
			d.hi[c].add(iv.hi, iv.slot, iv.hiOpen)
			below[c] = append(below[c], iv.slot)
		}
	}
	if cells > 1 {
		d.fail = make([]*bitset.BitSet, cells)
		for c := range d.fail {
			d.fail[c] = bitset.New(uint(n))
		}
		acc := make([]uint64, (n+63)/64)
		for c := cells - 1; c > 0; c-- {
			setSlots(acc, above[c])
			orWords(d.fail[c-1].Words(), acc)
		}
		clear(acc)
		for c := 0; c < cells-1; c++ {
			setSlots(acc, below[c])
			orWords(d.fail[c+1].Words(), acc)
		}
	}
	for c := range d.lo {
		sortBoundList(&d.lo[c])
		sortBoundList(&d.hi[c])
	}
}

func setSlots(words []uint64, slots []uint32) {
	for _, s := range slots {
		words[s>>6] |= 1 << (s & 63)
	}
}

func (b *boundList[K]) add(k K, slot uint32, open bool) {
	if open {
		slot |= openBit
	}
	b.keys = append(b.keys, k)
	b.slots = append(b.slots, slot)
}

// cellOf returns the cell holding key k: the number of boundaries <= k.
func (d *dim[K]) cellOf(k K) int {
	lo, hi := 0, len(d.bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if d.bounds[m] <= k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// quantileBounds picks up to cells-1 distinct boundaries at quantiles of all
// interval bounds.
func quantileBounds[K cmp.Ordered](ivs []interval[K], cells int) []K {
	if cells <= 1 {
		return nil
	}
	keys := make([]K, 0, 2*len(ivs))
	for _, iv := range ivs {
		if iv.loSet {
			keys = append(keys, iv.lo)
		}
		if iv.hiSet {
			keys = append(keys, iv.hi)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	var bounds []K
	for c := 1; c < cells; c++ {
		k := keys[c*len(keys)/cells]
		if len(bounds) == 0 || bounds[len(bounds)-1] < k {
			bounds = append(bounds, k)
		}
	}
	return bounds
}

// narrowKeys converts a numeric dimension's keys to float32 when every one
// of them is a float32 exactly, halving the memory of its bounds.
func narrowKeys(b *dimBuilder[float64]) (*dimBuilder[float32], bool) {
	fits := func(k float64) bool { return float64(float32(k)) == k }
	for _, iv := range b.intervals {
		if iv.loSet && !fits(iv.lo) || iv.hiSet && !fits(iv.hi) {
			return nil, false
		}
	}
	for _, kvs := range [][]keyed[float64]{b.eq, b.ne} {
		for _, kv := range kvs {
			if !fits(kv.key) {
				return nil, false
			}
		}
	}
	n := &dimBuilder[float32]{has: b.has, extras: b.extras}
	for _, iv := range b.intervals {
		n.intervals = append(n.intervals, interval[float32]{slot: iv.slot, lo: float32(iv.lo), hi: float32(iv.hi),
			loSet: iv.loSet, hiSet: iv.hiSet, loOpen: iv.loOpen, hiOpen: iv.hiOpen})
	}
	for _, kv := range b.eq {
		n.eq = append(n.eq, keyed[float32]{float32(kv.key), kv.slot})
	}
	for _, kv := range b.ne {
		n.ne = append(n.ne, keyed[float32]{float32(kv.key), kv.slot})
	}
	return n, true
}
