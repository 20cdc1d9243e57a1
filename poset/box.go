package poset

import (
	"hash/maphash"
	"math"

	"github.com/sift-pubsub/sift/match"
)

// span is what the candidate index keeps of a filter's constraints on one
// attribute: a numeric interval [lo, hi] (infinite when unconstrained) and
// a string equality if any. It over-approximates the constraints, so a
// containment test on spans is a necessary condition for covering.
type span struct {
	attr   string
	lo, hi float64
	eq     string
	hasEq  bool
}

// boxOf summarises a filter in the complete fragment as one span per
// constrained attribute, in attribute order. Ordering survives the float
// conversion (int64 to float64 rounding is monotone), and only non-strict
// comparisons are used on spans, so no covering is ever excluded.
func boxOf(f match.Filter) []span {
	var box []span
	for i := range f.Len() {
		c := f.At(i)
		if len(box) == 0 || box[len(box)-1].attr != c.Attr {
			box = append(box, span{attr: c.Attr, lo: math.Inf(-1), hi: math.Inf(1)})
		}
		s := &box[len(box)-1]
		k := c.Val.Kind()
		if k == match.KindString && c.Op == match.OpEq {
			s.eq, s.hasEq = c.Val.AsString(), true
		}
		if k != match.KindInt && k != match.KindFloat {
			continue
		}
		v := c.Val.AsFloat()
		switch c.Op {
		case match.OpEq:
			s.lo, s.hi = math.Max(s.lo, v), math.Min(s.hi, v)
		case match.OpLt, match.OpLe:
			s.hi = math.Min(s.hi, v)
		case match.OpGt, match.OpGe:
			s.lo = math.Max(s.lo, v)
		}
	}
	return box
}

// spanOf returns n's span on attr, if its box has one (loose items have
// no box).
func spanOf(n *node, attr string) (*span, bool) {
	for i := range n.key.box {
		if s := &n.key.box[i]; s.attr == attr {
			return s, true
		}
	}
	return nil, false
}

// boxContains reports whether outer may cover inner: every attribute of
// outer is constrained by inner, within outer's interval, and no string
// equality of outer is contradicted by a different one in inner.
func boxContains(outer, inner []span) bool {
	j := 0
	for i := range outer {
		o := &outer[i]
		for j < len(inner) && inner[j].attr < o.attr {
			j++
		}
		if j == len(inner) || inner[j].attr != o.attr {
			return false
		}
		in := &inner[j]
		if in.lo < o.lo || in.hi > o.hi {
			return false
		}
		if o.hasEq && in.hasEq && o.eq != in.eq {
			return false
		}
	}
	return true
}

// attrMask hashes each constrained attribute to one of 64 bits. If a covers
// b then every attribute of a is one of b, so mask(a) is a subset of
// mask(b); collisions only add candidates.
func attrMask(f match.Filter) uint64 {
	var m uint64
	for i := range f.Len() {
		m |= 1 << (strHash(f.At(i).Attr) % 64)
	}
	return m
}

// hashSeed seeds strHash, one per process: filter texts come from clients
// and neighbours, and with an unseeded hash a sender could choose values
// that all land in one bucket of the candidate index (every insert then
// walking all of them) or share one attribute bit.
var hashSeed = maphash.MakeSeed()

// strHash is a hash of s under the process's seed. Nothing outside the
// process sees it (no structure is persisted or sent by hash).
func strHash(s string) uint64 { return maphash.String(hashSeed, s) }
