package match

import (
	"cmp"
	"encoding/binary"
)

// Bound slots in 3 bytes (FastConfig.NarrowSlots). A bound list names each bound's subscription by
// its slot in the segment, with an open (strict) bound marked: 4 bytes as
// a uint32 with openBit. A segment of at most slots24Limit subscriptions
// needs 23 bits for the slot and one for the mark, so after the build its
// lists keep each slot in 3 bytes (s24) instead: at HEM's 20 bounds per
// subscription, 20 bytes less per subscription (200 MB at 10^7), which
// pays for 8 more cells per dimension. Matching loads 4 bytes at 3i (the
// list ends with a byte of padding) and masks the fourth away.

const (
	open24     = 1 << 23
	slotMask24 = open24 - 1
)

// slots24Limit is the most subscriptions a segment may have for its bound
// lists to keep 3-byte slots (a variable so that tests can make every
// segment keep 4-byte ones).
var slots24Limit = 1 << 23

// packSlots moves the slots of every list to 3 bytes each when the
// segment's n slots fit (see slots24Limit); buildCells calls it with
// FastConfig.NarrowSlots.
func packSlots[K cmp.Ordered](n int, lists ...[]boundList[K]) {
	if n > slots24Limit {
		return
	}
	for _, ls := range lists {
		for i := range ls {
			b := &ls[i]
			if len(b.slots) == 0 {
				// An empty sublist still points into the array the
				// lists were split from: it would keep all of it.
				b.slots = nil
				continue
			}
			s24 := make([]byte, 3*len(b.slots)+1)
			for j, s := range b.slots {
				v := s &^ openBit
				if s&openBit != 0 {
					v |= open24
				}
				s24[3*j], s24[3*j+1], s24[3*j+2] = byte(v), byte(v>>8), byte(v>>16)
			}
			b.s24, b.slots = s24, nil
		}
	}
}

// nslots returns the number of bounds in the list.
func (b *boundList[K]) nslots() int {
	if b.s24 != nil {
		return (len(b.s24) - 1) / 3
	}
	return len(b.slots)
}

// slot returns the i-th slot, with openBit for an open bound.
func (b *boundList[K]) slot(i int) uint32 {
	if b.s24 == nil {
		return b.slots[i]
	}
	v := binary.LittleEndian.Uint32(b.s24[3*i:]) & (open24 | slotMask24)
	if v&open24 != 0 {
		return v&slotMask24 | openBit
	}
	return v
}

// markAll24 marks the slots of bounds [lo, hi) of a 3-byte list, four
// per step: one 8-byte load for the first two and a 4-byte load each for
// the others.
func markAll24(s24 []byte, lo, hi int32, fail []uint64) {
	if lo >= hi {
		return
	}
	s := s24[3*lo : 3*hi+1]
	for len(s) >= 13 {
		w := binary.LittleEndian.Uint64(s)
		v0, v1 := uint32(w)&slotMask24, uint32(w>>24)&slotMask24
		v2 := binary.LittleEndian.Uint32(s[6:]) & slotMask24
		v3 := binary.LittleEndian.Uint32(s[9:]) & slotMask24
		fail[v0>>6] |= 1 << (v0 & 63)
		fail[v1>>6] |= 1 << (v1 & 63)
		fail[v2>>6] |= 1 << (v2 & 63)
		fail[v3>>6] |= 1 << (v3 & 63)
		s = s[12:]
	}
	for p := 0; p+4 <= len(s); p += 3 {
		v := binary.LittleEndian.Uint32(s[p:]) & slotMask24
		fail[v>>6] |= 1 << (v & 63)
	}
}

// markOpen24 marks the slots of the open bounds among [lo, hi) of a
// 3-byte list.
func markOpen24(s24 []byte, lo, hi int32, fail []uint64) {
	if lo >= hi {
		return
	}
	s := s24[3*lo : 3*hi+1]
	for p := 0; p+4 <= len(s); p += 3 {
		v := binary.LittleEndian.Uint32(s[p:])
		if v&open24 != 0 {
			v &= slotMask24
			fail[v>>6] |= 1 << (v & 63)
		}
	}
}
