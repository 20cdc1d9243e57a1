package match

import (
	"cmp"
	"hash/maphash"
	"math/bits"
)

// pointTable holds the pivot points of a segment's pivot dimension (see
// fast_pivot.go): per point value, its span of slots and, when the
// dimension has interval bounds, where the value falls among them.
//
// Why not a Go map: the pivot dimension names nearly every subscription
// of a segment when each wants its own value (topics, or the filters an
// upstream router holds), so a point is paid per subscription. A
// map[K]pivotPoint slot is the key and the whole 28-byte point, in groups
// sized by powers of two; here the values and spans sit in dense arrays,
// the cuts only when the dimension has bounds to cut, and the hash table
// holds a 4-byte index per slot. A lookup is still one hash and, almost
// always, one probe.
type pointTable[K cmp.Ordered] struct {
	seed  maphash.Seed
	keys  []K        // the point values
	spans []slotSpan // spans[i]: the slots wanting keys[i]
	cuts  []pointCut // cuts[i]: keys[i] among the bounds; nil when none
	table []uint32   // open addressing, linear probing: 1 + an index into keys, 0 empty
	mask  uint64     // len(table) - 1 (a power of two)
}

// pointCut is where a point value falls among its dimension's interval
// bounds: its cell, and its cuts of that cell's bound lists.
type pointCut struct {
	cell   int32
	lo, hi boundCut
}

// newPointTable returns a table for n points, without cuts when
// withCuts is false; add fills it.
func newPointTable[K cmp.Ordered](n int, withCuts bool) *pointTable[K] {
	size := 1 << bits.Len(uint(n+n/2)) // load at most 2/3
	t := &pointTable[K]{
		seed:  maphash.MakeSeed(),
		keys:  make([]K, 0, n),
		spans: make([]slotSpan, 0, n),
		table: make([]uint32, size),
		mask:  uint64(size - 1),
	}
	if withCuts {
		t.cuts = make([]pointCut, 0, n)
	}
	return t
}

// add records point k (not present yet) with its span and cut (ignored
// without cuts).
func (t *pointTable[K]) add(k K, sp slotSpan, c pointCut) {
	t.keys = append(t.keys, k)
	t.spans = append(t.spans, sp)
	if t.cuts != nil {
		t.cuts = append(t.cuts, c)
	}
	i := maphash.Comparable(t.seed, k) & t.mask
	for t.table[i] != 0 {
		i = (i + 1) & t.mask
	}
	t.table[i] = uint32(len(t.keys))
}

// find returns point k, if the table (nil: no points) has it.
func (t *pointTable[K]) find(k K) (pivotPoint, bool) {
	if t == nil {
		return pivotPoint{}, false
	}
	for i := maphash.Comparable(t.seed, k) & t.mask; ; i = (i + 1) & t.mask {
		x := t.table[i]
		if x == 0 {
			return pivotPoint{}, false
		}
		if t.keys[x-1] == k {
			return t.at(int(x - 1)), true
		}
	}
}

// at returns the i-th point added.
func (t *pointTable[K]) at(i int) pivotPoint {
	pt := pivotPoint{span: t.spans[i]}
	if t.cuts != nil {
		c := &t.cuts[i]
		pt.cell, pt.lo, pt.hi = c.cell, c.lo, c.hi
	}
	return pt
}
