package poset

import (
	"math/bits"
	"slices"
)

// maxEnumBits bounds subset enumeration in the candidate index: with more
// free bits than this the index walks its groups instead.
const maxEnumBits = 12

// candIndex finds covering candidates among a set of nodes without testing
// each: nodes are grouped by attribute mask, a covering query enumerates
// the masks that can be subsets (or supersets) of the query's mask, and a
// box containment test prunes each group's members. Every node that covers
// (or is covered by) the query is returned; some returned nodes may not be.
type candIndex struct {
	groups map[uint64][]*node // mask -> members; match-all nodes under 0
	loose  []*node            // members outside the complete fragment
	bitCnt [64]int32          // members having each mask bit
	used   uint64             // union of member masks
}

func newCandIndex() *candIndex {
	return &candIndex{groups: make(map[uint64][]*node)}
}

func (x *candIndex) add(n *node) {
	if !n.key.exact {
		n.ipos = len(x.loose)
		x.loose = append(x.loose, n)
		return
	}
	g := x.groups[n.key.mask]
	n.ipos = len(g)
	x.groups[n.key.mask] = append(g, n)
	for m := n.key.mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		x.bitCnt[b]++
		x.used |= 1 << b
	}
}

func (x *candIndex) remove(n *node) {
	if !n.key.exact {
		x.loose = swapRemove(x.loose, n.ipos)
		return
	}
	g := swapRemove(x.groups[n.key.mask], n.ipos)
	if len(g) == 0 {
		delete(x.groups, n.key.mask)
	} else {
		x.groups[n.key.mask] = g
	}
	for m := n.key.mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		if x.bitCnt[b]--; x.bitCnt[b] == 0 {
			x.used &^= 1 << b
		}
	}
}

// swapRemove removes list[i] by moving the last element into its place and
// fixing that element's index position.
func swapRemove(list []*node, i int) []*node {
	last := len(list) - 1
	list[i] = list[last]
	list[i].ipos = i
	list[last] = nil
	return list[:last]
}

// coverers appends the candidates that may cover u, in seq order.
func (x *candIndex) coverers(u *node, dst []*node) []*node {
	start := len(dst)
	dst = append(dst, x.groups[0]...) // the match-all filter covers everything
	if u.key.exact && !u.key.empty {
		free := u.key.mask
		if bits.OnesCount64(free) <= maxEnumBits && 1<<bits.OnesCount64(free) <= len(x.groups) {
			for sub := free; sub != 0; sub = (sub - 1) & free {
				dst = appendContaining(dst, x.groups[sub], u)
			}
		} else {
			for m, g := range x.groups {
				if m != 0 && m&^u.key.mask == 0 {
					dst = appendContaining(dst, g, u)
				}
			}
		}
	}
	sortBySeq(dst[start:])
	return dst
}

func appendContaining(dst, g []*node, u *node) []*node {
	for _, w := range g {
		if boxContains(w.key.box, u.key.box) {
			dst = append(dst, w)
		}
	}
	return dst
}

// covered appends the candidates that u may cover, in seq order.
func (x *candIndex) covered(u *node, dst []*node) []*node {
	start := len(dst)
	switch {
	case u.key.empty:
		for _, g := range x.groups {
			dst = append(dst, g...)
		}
		dst = append(dst, x.loose...)
	case u.key.exact:
		free := x.used &^ u.key.mask
		if bits.OnesCount64(free) <= maxEnumBits && 1<<bits.OnesCount64(free) <= len(x.groups) {
			for sub := free; ; sub = (sub - 1) & free {
				dst = appendContained(dst, x.groups[u.key.mask|sub], u)
				if sub == 0 {
					break
				}
			}
		} else {
			for m, g := range x.groups {
				if m&u.key.mask == u.key.mask && m != 0 {
					dst = appendContained(dst, g, u)
				}
			}
		}
	}
	sortBySeq(dst[start:])
	return dst
}

func appendContained(dst, g []*node, u *node) []*node {
	for _, w := range g {
		if boxContains(u.key.box, w.key.box) {
			dst = append(dst, w)
		}
	}
	return dst
}

func sortBySeq(list []*node) {
	slices.SortFunc(list, func(a, b *node) int { return cmpSeq(a, b.seq) })
}
