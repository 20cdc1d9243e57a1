package sbstree

import "math/bits"

// A node with many children (the root holds one per distinct lowest set
// bit: hundreds) also keeps them as a bitmap, so that matching ANDs the
// bitmap with the summary a word at a time instead of probing the summary
// once per child. The child of bit b is kids[rank of b in the bitmap].

// Hysteresis of the bitmap: a node gets one when it reaches denseMin
// children and drops it below denseMin/2.
const denseMin = 32

// addDense records a new child bit in n's bitmap, building the bitmap
// (of words words) when n reaches denseMin children.
func (n *node) addDense(b uint16, words int) {
	switch {
	case n.mask != nil:
		n.mask[b>>6] |= 1 << (b & 63)
	case len(n.bits) >= denseMin:
		n.mask = make([]uint64, words)
		for _, x := range n.bits {
			n.mask[x>>6] |= 1 << (x & 63)
		}
	}
}

// removeDense drops a child bit from n's bitmap, and the bitmap when n
// has few children left.
func (n *node) removeDense(b uint16) {
	switch {
	case n.mask == nil:
	case len(n.bits) < denseMin/2:
		n.mask = nil
	default:
		n.mask[b>>6] &^= 1 << (b & 63)
	}
}

// denseWalk is walk over a node with a bitmap: the children whose bit is
// set in ew, in increasing bit order.
func denseWalk(n *node, ew []uint64, dst []uint64) []uint64 {
	j := 0 // index in kids of the first bit of word i
	for i, m := range n.mask {
		for hits := m & ew[i]; hits != 0; hits &= hits - 1 {
			below := m & (1<<bits.TrailingZeros64(hits) - 1)
			dst = walk(n.kids[j+bits.OnesCount64(below)], ew, dst)
		}
		j += bits.OnesCount64(m)
	}
	return dst
}

// denseAny is anyWalk over a node with a bitmap.
func denseAny(n *node, ew []uint64) bool {
	j := 0
	for i, m := range n.mask {
		for hits := m & ew[i]; hits != 0; hits &= hits - 1 {
			below := m & (1<<bits.TrailingZeros64(hits) - 1)
			if anyWalk(n.kids[j+bits.OnesCount64(below)], ew) {
				return true
			}
		}
		j += bits.OnesCount64(m)
	}
	return false
}
