package poset

import (
	"hash/maphash"
	"math"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// span is what the candidate index keeps of a filter's constraints on one
// attribute: a numeric interval [lo, hi] (infinite when unconstrained), a
// string equality if any, else the longest prefix if any, and whether a
// string ordering comparison constrains it too. It over-approximates the
// constraints, so a containment test on spans is a necessary condition
// for covering.
//
// Why the prefix: without it a span of `symbol prefix "BA"` says nothing
// about symbol, so every filter requiring symbol == v passed the box test
// against it, in both directions, and cost a covering test each (hundreds
// per insert of such a filter on the stock workload, the largest part of
// its routing table's insert time).
type span struct {
	attr      string
	lo, hi    float64
	str       string // the string equality's value (hasEq), else the longest prefix's (hasPrefix)
	hasEq     bool
	hasPrefix bool // str is the longest prefix; no string equality
	strRange  bool // a string is compared with <, <=, > or >= on attr
}

// boxOf summarises a filter in the complete fragment as one span per
// constrained attribute, in attribute order. A span's numeric interval is
// the smallest and largest number the filter admits there
// (match.NumberHull), not the bounds it writes: events carry only int64
// and float64 values, so a covered filter may write a lower bound below
// its coverer's (a > 2^53+1 under a >= 2^53+2) while admitting nothing
// below it. Ordering survives the float conversion (int64 to float64
// rounding is monotone), and only non-strict comparisons are used on
// spans, so no covering is ever excluded.
func boxOf(f match.Filter) []span {
	var box []span
	for i := range f.Len() {
		c := f.At(i)
		if len(box) == 0 || box[len(box)-1].attr != c.Attr {
			box = append(box, span{attr: c.Attr, lo: math.Inf(-1), hi: math.Inf(1)})
		}
		s := &box[len(box)-1]
		k := c.Val.Kind()
		if k == match.KindString {
			s.addString(c.Op, c.Val.AsString())
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
	for i := range box {
		box[i].numberHull(f)
	}
	return box
}

// numberHull narrows s's numeric interval to the numbers f admits on
// s.attr, when f's constraints there are numeric and admit some (the
// written bounds stay otherwise: such a filter is unsatisfiable or not
// numeric on s.attr).
func (s *span) numberHull(f match.Filter) {
	if math.IsInf(s.lo, -1) && math.IsInf(s.hi, 1) {
		return // no numeric bound: nothing to narrow
	}
	var buf [8]match.Constraint
	cs := buf[:0]
	for i := range f.Len() {
		if c := f.At(i); c.Attr == s.attr {
			cs = append(cs, c)
		}
	}
	if lo, hi, ok := match.NumberHull(cs); ok {
		s.lo, s.hi = lo, hi
	}
}

// addString records a constraint attr op v on a string v.
func (s *span) addString(op match.Op, v string) {
	switch op {
	case match.OpEq:
		s.str, s.hasEq, s.hasPrefix = v, true, false
	case match.OpPrefix:
		if !s.hasEq && (!s.hasPrefix || len(v) > len(s.str)) {
			s.str, s.hasPrefix = v, true
		}
	case match.OpLt, match.OpLe, match.OpGt, match.OpGe:
		s.strRange = true
	}
}

// spanOf returns n's span on attr, if its box has one (loose items have
// no box).
func spanOf(n *node, attr string) (span, bool) {
	var buf [2]span
	for _, s := range n.key.spans(&buf) {
		if s.attr == attr {
			return s, true
		}
	}
	return span{}, false
}

// boxContains reports whether outer may cover inner: every attribute of
// outer is constrained by inner, within outer's interval, and inner's
// string equality or prefix there does not contradict outer's (see
// strContains).
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
		if !strContains(o, in) {
			return false
		}
	}
	return true
}

// strContains reports whether the string constraints of span o may admit
// every string inner admits, as far as their equalities and prefixes
// tell. A satisfiable inner with an equality admits its value; one with a
// prefix q and no equality or ordering comparison admits infinitely many
// strings, every string starting with q but finitely many (only != can
// exclude some), so an equality in o cannot admit them all, and a prefix
// p in o admits them all only if q starts with p. An ordering comparison
// in inner can narrow a prefix to one string (prefix "v" && <= "v"), so
// it leaves inner's prefix out of the test.
func strContains(o, in *span) bool {
	narrow := in.hasEq || in.hasPrefix && !in.strRange // inner's str bounds what it admits
	switch {
	case !narrow:
		return true
	case o.hasEq:
		return in.hasEq && in.str == o.str
	case o.hasPrefix:
		return strings.HasPrefix(in.str, o.str)
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
