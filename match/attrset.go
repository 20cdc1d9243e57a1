package match

import (
	"math"
	"strings"
)

// bound is one end of an interval of values; an unset bound is infinite.
type bound struct {
	v    Value
	set  bool
	open bool
}

// attrSet describes the values one attribute may take under a conjunction
// of constraints on it: a type class, an interval, excluded points, and for
// strings the required suffixes and substrings. It is the common ground of
// covering, overlap and merging. Its emptiness and, in covering, what a
// numeric set implies count the int64 and float64 values events carry
// exactly (admitsNumberIn): a range they do not reach is empty.
type attrSet struct {
	cls      class // classNone: any value (only `exists` constraints)
	empty    bool  // provably no value satisfies the constraints
	lo, hi   bound
	prefix   string // longest prefix constraint (strings)
	ne       []Value
	suffixes []string
	contains []string
}

// newAttrSet combines the constraints on one attribute.
func newAttrSet(cs []Constraint) attrSet {
	var s attrSet
	for _, c := range cs {
		s.add(c)
	}
	s.finish()
	return s
}

func (s *attrSet) add(c Constraint) {
	if c.Op == OpExists {
		return
	}
	cls := c.Val.kind.class()
	if s.cls != classNone && s.cls != cls {
		s.empty = true
		return
	}
	s.cls = cls
	switch c.Op {
	case OpEq:
		s.raiseLo(c.Val, false)
		s.lowerHi(c.Val, false)
	case OpNe:
		s.ne = append(s.ne, c.Val)
	case OpLt, OpLe:
		s.lowerHi(c.Val, c.Op == OpLt)
	case OpGt, OpGe:
		s.raiseLo(c.Val, c.Op == OpGt)
	case OpPrefix:
		s.raiseLo(c.Val, false)
		if succ, ok := prefixSuccessor(c.Val.str); ok {
			s.lowerHi(Str(succ), true)
		}
		if len(c.Val.str) > len(s.prefix) {
			s.prefix = c.Val.str
		}
	case OpSuffix:
		s.suffixes = append(s.suffixes, c.Val.str)
	case OpContains:
		s.contains = append(s.contains, c.Val.str)
	}
}

func (s *attrSet) raiseLo(v Value, open bool) {
	if !s.lo.set {
		s.lo = bound{v: v, set: true, open: open}
		return
	}
	switch c, _ := Compare(v, s.lo.v); {
	case c > 0:
		s.lo = bound{v: v, set: true, open: open}
	case c == 0:
		s.lo.open = s.lo.open || open
	}
}

func (s *attrSet) lowerHi(v Value, open bool) {
	if !s.hi.set {
		s.hi = bound{v: v, set: true, open: open}
		return
	}
	switch c, _ := Compare(v, s.hi.v); {
	case c < 0:
		s.hi = bound{v: v, set: true, open: open}
	case c == 0:
		s.hi.open = s.hi.open || open
	}
}

// finish normalises the set and decides emptiness.
func (s *attrSet) finish() {
	if s.empty || s.cls == classNone {
		return
	}
	if s.cls == classBool {
		s.empty = len(s.bools()) == 0
		return
	}
	if s.cls == classString && !s.lo.set {
		s.lo = bound{v: Str(""), set: true} // no string is below ""
	}
	if s.cls == classString && !s.lo.open && s.hi.set && s.hi.open && s.hi.v.str == s.lo.v.str+"\x00" {
		s.hi = bound{v: s.lo.v, set: true} // [x, x\0) holds x alone
	}
	if s.lo.set && s.hi.set {
		c, _ := Compare(s.lo.v, s.hi.v)
		if c > 0 || c == 0 && (s.lo.open || s.hi.open) {
			s.empty = true
			return
		}
	}
	if s.cls == classNumber {
		s.empty = !roomy(s.lo, s.hi, len(s.ne)) && !s.admitsNumberIn(bound{}, bound{})
		return
	}
	if p, ok := s.point(); ok {
		s.empty = !s.admits(p)
		return
	}
	s.empty = !s.suffixesCompatible()
}

// admitsNumberIn reports whether the numeric set s admits some int64 or
// float64 value within lo and hi as well (unset: unbounded). It walks
// the values from the lower end up, past at most one per excluded point,
// so it is exact however narrow the range: there may be no number an
// event can carry inside it (see nextNumber).
func (s *attrSet) admitsNumberIn(lo, hi bound) bool {
	in := *s // the set's bounds narrowed to lo and hi, as constraints narrow them
	if lo.set {
		in.raiseLo(lo.v, lo.open)
	}
	if hi.set {
		in.lowerHi(hi.v, hi.open)
	}
	lo, hi = in.lo, in.hi
	v, ok := lowestNumber, true
	if lo.set {
		v = lo.v
		if lo.open {
			v, ok = nextNumber(v)
		}
	}
	for i := 0; ok && i <= len(s.ne); i++ {
		if hi.set {
			if c := compareNumbers(v, hi.v); c > 0 || c == 0 && hi.open {
				return false
			}
		}
		if s.admits(v) {
			return true
		}
		v, ok = nextNumber(v)
	}
	return ok // more values in range than points excluded
}

// roomy reports, without walking them, whether a numeric range not empty
// as an interval of reals certainly holds more than n values events can
// carry (the fast path of the exact tests): its ends lie
// within ±2^51, where floats are at most 0.5 apart, and it is unbounded
// or at least n+1 wide.
func roomy(lo, hi bound, n int) bool {
	const edge = 1 << 51
	inside := func(b bound) bool { return !b.set || math.Abs(b.v.AsFloat()) < edge }
	if !inside(lo) || !inside(hi) {
		return false
	}
	return !lo.set || !hi.set || hi.v.AsFloat()-lo.v.AsFloat() >= float64(n+1)
}

// loConstrains reports whether the lower bound excludes any value of the
// class: finish gives every string set the bound >= "", which excludes
// nothing and need not be written out or indexed.
func (s *attrSet) loConstrains() bool {
	return s.lo.set && !(s.cls == classString && s.lo.v.str == "" && !s.lo.open)
}

// point returns the single value of a set whose interval is one point.
func (s *attrSet) point() (Value, bool) {
	if s.lo.set && s.hi.set && !s.lo.open && !s.hi.open {
		if c, _ := Compare(s.lo.v, s.hi.v); c == 0 {
			return s.lo.v, true
		}
	}
	return Value{}, false
}

// admits reports whether a value of the set's class satisfies every
// constraint summarised in s.
func (s *attrSet) admits(v Value) bool {
	if v.kind.class() != s.cls && s.cls != classNone {
		return false
	}
	if s.lo.set {
		if c, _ := Compare(v, s.lo.v); c < 0 || c == 0 && s.lo.open {
			return false
		}
	}
	if s.hi.set {
		if c, _ := Compare(v, s.hi.v); c > 0 || c == 0 && s.hi.open {
			return false
		}
	}
	for _, n := range s.ne {
		if c, _ := Compare(v, n); c == 0 {
			return false
		}
	}
	for _, suf := range s.suffixes {
		if !strings.HasSuffix(v.str, suf) {
			return false
		}
	}
	for _, sub := range s.contains {
		if !strings.Contains(v.str, sub) {
			return false
		}
	}
	return true
}

// bools returns the bool values a bool-class set admits.
func (s *attrSet) bools() []Value {
	var out []Value
	for _, b := range []Value{Bool(false), Bool(true)} {
		if s.admits(b) {
			out = append(out, b)
		}
	}
	return out
}

// suffixesCompatible reports whether all required suffixes can hold at once
// (each pair must be suffix-related).
func (s *attrSet) suffixesCompatible() bool {
	for i, a := range s.suffixes {
		for _, b := range s.suffixes[i+1:] {
			if !strings.HasSuffix(a, b) && !strings.HasSuffix(b, a) {
				return false
			}
		}
	}
	return true
}

// guaranteedPrefix returns a prefix every string of the set has.
func (s *attrSet) guaranteedPrefix() string {
	gp := s.prefix
	if s.lo.set && s.hi.set {
		if cp := commonPrefix(s.lo.v.str, s.hi.v.str); len(cp) > len(gp) {
			gp = cp
		}
	}
	return gp
}

// longestSuffix returns the longest required suffix.
func (s *attrSet) longestSuffix() string {
	var l string
	for _, suf := range s.suffixes {
		if len(suf) > len(l) {
			l = suf
		}
	}
	return l
}

// prefixSuccessor returns the least string greater than every string with
// prefix p; ok is false when there is none (p empty or all 0xff bytes).
func prefixSuccessor(p string) (string, bool) {
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "", false
	}
	b[len(b)-1]++
	return string(b), true
}

func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return a[:i]
}

// namedSet is one attribute's attrSet.
type namedSet struct {
	attr string
	set  attrSet
}

// attrSets summarises a filter per attribute, sorted by attribute name.
type attrSets []namedSet

// get returns the set of an attribute.
func (s attrSets) get(attr string) (*attrSet, bool) {
	for i := range s {
		if s[i].attr == attr {
			return &s[i].set, true
		}
	}
	return nil, false
}

// filterSets summarises a filter per attribute. empty reports that some
// attribute's constraints are unsatisfiable, so the filter matches nothing.
func filterSets(f Filter) (sets attrSets, empty bool) {
	n := 0
	for i := range f.cs {
		if i == 0 || f.cs[i].Attr != f.cs[i-1].Attr {
			n++
		}
	}
	return filterSetsInto(make(attrSets, 0, n), f)
}

// filterSetsInto is filterSets appending to sets, so that a caller that
// keeps the result to itself can pass a buffer on its stack (Covers: one
// allocation per covering test was a fifth of a router's insert).
func filterSetsInto(sets attrSets, f Filter) (_ attrSets, empty bool) {
	for i := 0; i < len(f.cs); {
		attr := f.cs[i].Attr
		j := i
		for j < len(f.cs) && f.cs[j].Attr == attr {
			j++
		}
		s := newAttrSet(f.cs[i:j])
		empty = empty || s.empty
		sets = append(sets, namedSet{attr: attr, set: s})
		i = j
	}
	return sets, empty
}
