package match

import "github.com/bits-and-blooms/bitset"

// slotSet is a set of segment slots stored as a bitset when dense and as a
// sorted list when sparse, so that rare attributes cost memory and time in
// proportion to their subscriptions, not to the segment.
type slotSet struct {
	bits *bitset.BitSet
	list []uint32
}

// newSlotSet builds a set of slots out of n.
func newSlotSet(slots []uint32, n int) slotSet {
	if listed(len(slots), n) {
		return slotSet{list: slots}
	}
	return slotSet{bits: bitsetOf(slots, n)}
}

// listed reports whether newSlotSet keeps k slots out of n as a list.
func listed(k, n int) bool { return k*32 < n }

// bitsetOf returns the slots as a bitset of n bits.
func bitsetOf(slots []uint32, n int) *bitset.BitSet {
	b := bitset.New(uint(n))
	for _, s := range slots {
		b.Set(uint(s))
	}
	return b
}

// each calls fn for every member.
func (s slotSet) each(fn func(slot uint32)) {
	if s.bits == nil {
		for _, slot := range s.list {
			fn(slot)
		}
		return
	}
	for i, ok := s.bits.NextSet(0); ok; i, ok = s.bits.NextSet(i + 1) {
		fn(uint32(i))
	}
}

// orWords ORs src into dst (len(src) <= len(dst)). It is the inner loop of
// matching; unrolled by four it runs about 1.5x faster than the plain loop
// (bounds checks hoisted, more loads in flight).
func orWords(dst, src []uint64) {
	dst = dst[:len(src)]
	i := 0
	for ; i+4 <= len(src); i += 4 {
		d := dst[i : i+4 : i+4]
		s := src[i : i+4 : i+4]
		d[0] |= s[0]
		d[1] |= s[1]
		d[2] |= s[2]
		d[3] |= s[3]
	}
	for ; i < len(src); i++ {
		dst[i] |= src[i]
	}
}

// len returns the number of members.
func (s slotSet) len() int {
	if s.bits != nil {
		return int(s.bits.Count())
	}
	return len(s.list)
}

// orWords4 ORs a, b, c and e (each len(dst) long) into dst in one pass,
// reading and writing dst once for four bitsets.
func orWords4(dst, a, b, c, e []uint64) {
	n := len(dst)
	a, b, c, e = a[:n], b[:n], c[:n], e[:n]
	for i := range dst {
		dst[i] |= a[i] | b[i] | c[i] | e[i]
	}
}

// orWords3 ORs a, b and c (each len(dst) long) into dst in one pass.
func orWords3(dst, a, b, c []uint64) {
	n := len(dst)
	a, b, c = a[:n], b[:n], c[:n]
	for i := range dst {
		dst[i] |= a[i] | b[i] | c[i]
	}
}

// orWords2 ORs a and b (each len(dst) long) into dst in one pass.
func orWords2(dst, a, b []uint64) {
	n := len(dst)
	a, b = a[:n], b[:n]
	for i := range dst {
		dst[i] |= a[i] | b[i]
	}
}
