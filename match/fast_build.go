package match

import (
	"cmp"
	"slices"
	"sort"

	"github.com/bits-and-blooms/bitset"
)

// keyed is a key with a slot; for interval bounds the slot's openBit marks
// a strict bound.
type keyed[K cmp.Ordered] struct {
	key  K
	slot uint32
}

// dimBuilder collects a dimension's constraints before the build. The two
// bounds of an interval are filed independently: matching and the cell
// bitsets only ever need each bound on its own.
type dimBuilder[K cmp.Ordered] struct {
	has      []uint32
	los, his []keyed[K]
	eq, ne   []keyed[K]
	extras   []extraPred
	// Bounds read from built segments come as sorted runs starting at
	// loRuns and hiRuns, which the build merges instead of sorting, unless
	// fresh bounds (from filters, unsorted) were added too.
	loRuns, hiRuns []int
	fresh          bool
	// pivot marks the segment's pivot dimension, whose points need no
	// eqAll (see dim.points).
	pivot bool
}

// add records one subscription's constraints on the dimension. keyOf maps a
// value of the dimension's class to its key, reporting false when the key
// would not be exact. track adds the slot to has (see attrBuilder.mixed).
func (b *dimBuilder[K]) add(slot uint32, s *attrSet, cs []Constraint, keyOf func(Value) (K, bool), track bool) {
	b.fresh = true
	if track {
		b.has = append(b.has, slot)
	}
	ne := make([]K, 0, len(s.ne))
	exact := len(s.suffixes) == 0 && len(s.contains) == 0
	for _, v := range s.ne {
		k, ok := keyOf(v)
		exact = exact && ok
		ne = append(ne, k)
	}
	loSet := s.loConstrains()
	var lo, hi K
	if loSet {
		k, ok := keyOf(s.lo.v)
		lo, exact = k, exact && ok
	}
	if s.hi.set {
		k, ok := keyOf(s.hi.v)
		hi, exact = k, exact && ok
	}
	if !exact {
		b.extras = append(b.extras, extraPred{slot: slot, set: *s, cs: cs})
		return
	}
	for _, k := range ne {
		b.ne = append(b.ne, keyed[K]{k, slot})
	}
	if _, point := s.point(); point {
		b.eq = append(b.eq, keyed[K]{lo, slot})
		return
	}
	if loSet {
		b.los = append(b.los, keyed[K]{lo, withOpen(slot, s.lo.open)})
	}
	if s.hi.set {
		b.his = append(b.his, keyed[K]{hi, withOpen(slot, s.hi.open)})
	}
}

func withOpen(slot uint32, open bool) uint32 {
	if open {
		return slot | openBit
	}
	return slot
}

// build turns the collected constraints into a dimension over n slots, has
// being its subscriptions. It drops what it has consumed, so that a build
// holds little more than the larger of the builder and the index.
func (b *dimBuilder[K]) build(has []uint32, n int, cfg *FastConfig) *dim[K] {
	d := &dim[K]{has: newSlotSet(has, n), extras: b.extras}
	b.has = nil
	if len(b.eq) > 0 && !b.pivot {
		all := make([]uint32, len(b.eq))
		for i, kv := range b.eq {
			all[i] = kv.slot
		}
		slices.Sort(all)
		d.eqAll = newSlotSet(all, n)
		d.eq = eqPoints(groupKeyed(b.eq), d.eqAll)
	}
	if len(b.ne) > 0 {
		d.ne = neSets(groupKeyed(b.ne), n)
	}
	b.eq, b.ne = nil, nil
	if len(b.los)+len(b.his) > 0 {
		if b.fresh {
			b.loRuns, b.hiRuns = nil, nil
		}
		los, his := b.los, b.his
		b.los, b.his = nil, nil
		d.buildCells(los, his, b.loRuns, b.hiRuns, n, cfg)
	}
	return d
}

// eqPoints pairs each point value's slots with its miss mask: for a value
// wanted by more than a quarter as many points as the bitset all has
// words, the words of all without those points (see dim.eq). The masks
// thus take at most 32 bytes per point in all; in exchange an event with
// such a value ORs its window's words of one mask instead of merging its
// points into a pass over all (10^4 stock subscriptions: 11 sectors of
// ~64 subscriptions each on 157 words; 10% less time per event than at one
// mask word per point).
func eqPoints[K cmp.Ordered](groups map[K][]uint32, all slotSet) map[K]eqPoint {
	eq := make(map[K]eqPoint, len(groups))
	for k, slots := range groups {
		pt := eqPoint{slots: slots}
		if all.bits != nil && 4*len(slots) > len(all.bits.Words()) {
			pt.miss = slices.Clone(all.bits.Words())
			for _, s := range slots {
				pt.miss[s>>6] &^= 1 << (s & 63)
			}
		}
		eq[k] = pt
	}
	return eq
}

// neSets turns each excluded value's slots into a set: a bitset when they
// are more than half as many as its words (a window then ORs a few words
// instead of writing a bit per slot, for at most 4 bytes more per slot),
// else the sorted list.
func neSets[K cmp.Ordered](groups map[K][]uint32, n int) map[K]slotSet {
	words := (n + 63) / 64
	ne := make(map[K]slotSet, len(groups))
	for k, slots := range groups {
		if 2*len(slots) <= words {
			ne[k] = slotSet{list: slots}
			continue
		}
		ne[k] = slotSet{bits: bitsetOf(slots, n)}
	}
	return ne
}

// groupKeyed maps each key to its slots, sorted (matching clips them to
// its window).
func groupKeyed[K cmp.Ordered](kvs []keyed[K]) map[K][]uint32 {
	m := make(map[K][]uint32)
	for _, kv := range kvs {
		m[kv.key] = append(m[kv.key], kv.slot)
	}
	for _, slots := range m {
		slices.Sort(slots)
	}
	return m
}

// buildCells sorts the bounds, cuts the key range into cells at quantiles of
// all bounds, gives each cell the (contiguous) bounds inside it, and marks
// in fail[c] the slots whose interval misses cell c: those whose lower bound
// lies in a later cell or whose upper bound lies in an earlier one.
func (d *dim[K]) buildCells(los, his []keyed[K], loRuns, hiRuns []int, n int, cfg *FastConfig) {
	loList, hiList := sortedBounds(los, loRuns), sortedBounds(his, hiRuns)
	cells := min(cfg.maxCells(n), max(1, (len(los)+len(his))/cfg.BoundsPerCell))
	d.bounds = quantiles(loList.keys, hiList.keys, cells)
	cells = len(d.bounds) + 1
	d.lo, d.hi = loList.split(d.bounds), hiList.split(d.bounds)
	packOffsets(d.lo, d.hi)
	if cfg.NarrowSlots {
		defer packSlots(n, d.lo, d.hi) // once the cells' bitsets are built from the slots
	}
	if cells == 1 {
		return
	}
	d.fail = make([]*bitset.BitSet, cells)
	for c := range d.fail {
		d.fail[c] = bitset.New(uint(n))
	}
	acc := make([]uint64, (n+63)/64)
	for c := cells - 1; c > 0; c-- {
		setSlots(acc, d.lo[c].slots)
		orWords(d.fail[c-1].Words(), acc)
	}
	clear(acc)
	for c := 0; c < cells-1; c++ {
		setSlots(acc, d.hi[c].slots)
		orWords(d.fail[c+1].Words(), acc)
	}
}

// setSlots sets the bits of slots (ignoring their open marks).
func setSlots(words []uint64, slots []uint32) {
	for _, s := range slots {
		s &^= openBit
		words[s>>6] |= 1 << (s & 63)
	}
}

// sortedBounds sorts bounds by key into one list. runs, when not nil,
// gives the starts of sorted runs that kvs is made of; they are merged.
func sortedBounds[K cmp.Ordered](kvs []keyed[K], runs []int) boundList[K] {
	if runs != nil {
		kvs = mergeRuns(kvs, runs)
	}
	b := boundList[K]{keys: make([]K, len(kvs)), slots: make([]uint32, len(kvs))}
	for i, kv := range kvs {
		b.keys[i], b.slots[i] = kv.key, kv.slot
	}
	if runs == nil {
		sortBoundList(&b)
	}
	return b
}

// mergeRuns merges the sorted runs of kvs (starting at runs[i]) pairwise
// until one is left, in O(n log runs).
func mergeRuns[K cmp.Ordered](kvs []keyed[K], runs []int) []keyed[K] {
	bounds := append(slices.Clone(runs), len(kvs))
	src, dst := kvs, make([]keyed[K], len(kvs))
	for len(bounds) > 2 {
		next := []int{0}
		for i := 0; i+1 < len(bounds); i += 2 {
			lo, mid := bounds[i], bounds[i+1]
			hi := mid
			if i+2 < len(bounds) {
				hi = bounds[i+2]
			}
			mergeTwo(dst[lo:hi], src[lo:mid], src[mid:hi])
			next = append(next, hi)
		}
		bounds = next
		src, dst = dst, src
	}
	return src
}

func mergeTwo[K cmp.Ordered](dst, a, b []keyed[K]) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j].key < a[i].key {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// split cuts a sorted list into one sublist per cell; cell c holds the keys
// k with bounds[c-1] <= k < bounds[c]. The sublists share the list's arrays.
func (b boundList[K]) split(bounds []K) []boundList[K] {
	out := make([]boundList[K], len(bounds)+1)
	start := 0
	for c := range out {
		end := len(b.keys)
		if c < len(bounds) {
			end = start + sort.Search(len(b.keys)-start, func(i int) bool { return b.keys[start+i] >= bounds[c] })
		}
		out[c] = boundList[K]{keys: b.keys[start:end:end], slots: b.slots[start:end:end]}
		start = end
	}
	return out
}

// quantiles picks up to cells-1 distinct boundaries at quantiles of the
// union of two sorted key lists.
func quantiles[K cmp.Ordered](a, b []K, cells int) []K {
	total := len(a) + len(b)
	if cells <= 1 || total == 0 {
		return nil
	}
	var bounds []K
	i, j := 0, 0
	for c := 1; c < cells; c++ {
		// Advance the merge to position c*total/cells.
		for target := c * total / cells; i+j < target; {
			if j >= len(b) || i < len(a) && a[i] <= b[j] {
				i++
			} else {
				j++
			}
		}
		var k K
		if j >= len(b) || i < len(a) && a[i] <= b[j] {
			k = a[i]
		} else {
			k = b[j]
		}
		if len(bounds) == 0 || bounds[len(bounds)-1] < k {
			bounds = append(bounds, k)
		}
	}
	return bounds
}

// narrowKeys converts a numeric dimension's keys to float32 when every one
// of them is a float32 exactly, halving the memory of its bounds.
func narrowKeys(b *dimBuilder[float64]) (*dimBuilder[float32], bool) {
	lists := [][]keyed[float64]{b.los, b.his, b.eq, b.ne}
	for _, kvs := range lists {
		for _, kv := range kvs {
			if float64(float32(kv.key)) != kv.key {
				return nil, false
			}
		}
	}
	conv := func(kvs []keyed[float64]) []keyed[float32] {
		out := make([]keyed[float32], len(kvs))
		for i, kv := range kvs {
			out[i] = keyed[float32]{float32(kv.key), kv.slot}
		}
		return out
	}
	return &dimBuilder[float32]{has: b.has, extras: b.extras,
		los: conv(b.los), his: conv(b.his), eq: conv(b.eq), ne: conv(b.ne),
		loRuns: b.loRuns, hiRuns: b.hiRuns, fresh: b.fresh}, true
}
