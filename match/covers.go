package match

import "strings"

// Covers reports whether a covers b: every event that matches b also
// matches a. It is sound (true only when covering holds) and complete where
// the package documentation says. A filter that matches nothing is covered
// by every filter; the empty filter (MatchAllText) covers every filter.
func Covers(a, b Filter) bool {
	if len(a.cs) == 0 {
		return true
	}
	var buf [4]namedSet // most filters constrain at most four attributes
	bsets, bEmpty := filterSetsInto(buf[:0], b)
	if bEmpty {
		return true
	}
	for _, c := range a.cs {
		s, ok := bsets.get(c.Attr)
		if !ok || !s.implies(c) {
			return false
		}
	}
	return true
}

// implies reports whether every value admitted by the (non-empty) set s
// satisfies the constraint c on the same attribute.
func (s *attrSet) implies(c Constraint) bool {
	if c.Op == OpExists {
		return true // every constraint in s requires presence
	}
	cls := c.Val.kind.class()
	if s.cls != cls {
		return false // classNone admits every type; another class never satisfies c
	}
	if s.cls == classBool {
		for _, b := range s.bools() {
			if !c.Holds(b, true) {
				return false
			}
		}
		return true
	}
	if p, ok := s.point(); ok {
		return c.Holds(p, true)
	}
	if s.cls == classNumber {
		return s.impliesNumber(c)
	}
	switch c.Op {
	case OpLt, OpLe:
		return s.hi.set && s.below(c.Val, c.Op == OpLt)
	case OpGt, OpGe:
		return s.lo.set && s.above(c.Val, c.Op == OpGt)
	case OpNe:
		return !s.admits(c.Val)
	case OpPrefix:
		return s.impliesPrefix(c.Val.str)
	case OpSuffix:
		return strings.HasSuffix(s.longestSuffix(), c.Val.str)
	case OpContains:
		return s.impliesContains(c.Val.str)
	}
	return false // OpEq on a set with more than one value
}

// impliesNumber is implies for a numeric set of more than one point: c
// holds for every admitted value when s admits none that c rejects,
// counting the values events carry exactly (admitsNumberIn), so a bound
// that leaves out only values no event can carry still implies c.
func (s *attrSet) impliesNumber(c Constraint) bool {
	v := c.Val
	switch c.Op {
	case OpLt, OpLe:
		if s.hi.set && s.below(v, c.Op == OpLt) {
			return true
		}
		// s reaches v or beyond as reals: does it admit such a value?
		from := bound{v: v, set: true, open: c.Op == OpLe}
		if s.lo.set && compareNumbers(s.lo.v, v) > 0 || roomy(from, s.hi, len(s.ne)) {
			return false // all of s lies beyond v (and s is not empty), or enough of it
		}
		return !s.admitsNumberIn(from, bound{})
	case OpGt, OpGe:
		if s.lo.set && s.above(v, c.Op == OpGt) {
			return true
		}
		upto := bound{v: v, set: true, open: c.Op == OpGe}
		if s.hi.set && compareNumbers(s.hi.v, v) < 0 || roomy(s.lo, upto, len(s.ne)) {
			return false
		}
		return !s.admitsNumberIn(bound{}, upto)
	case OpNe:
		return !s.admits(v)
	case OpEq:
		if roomy(s.lo, s.hi, len(s.ne)+1) {
			return false // two values at least
		}
		other := bound{v: v, set: true, open: true}
		return !s.admitsNumberIn(bound{}, other) && !s.admitsNumberIn(other, bound{})
	}
	return false
}

// below reports whether every admitted value is < v (strict) or <= v.
func (s *attrSet) below(v Value, strict bool) bool {
	c, _ := Compare(s.hi.v, v)
	if c < 0 || c == 0 && (!strict || s.hi.open) {
		return true
	}
	return c == 0 && !s.admits(v) // hi itself excluded (by != or string rules)
}

// above reports whether every admitted value is > v (strict) or >= v.
func (s *attrSet) above(v Value, strict bool) bool {
	c, _ := Compare(s.lo.v, v)
	if c > 0 || c == 0 && (!strict || s.lo.open) {
		return true
	}
	return c == 0 && !s.admits(v)
}

// impliesPrefix reports whether every admitted string starts with p: the
// set's interval must lie inside [p, successor(p)).
func (s *attrSet) impliesPrefix(p string) bool {
	if strings.HasPrefix(s.guaranteedPrefix(), p) {
		return true
	}
	if !s.lo.set || s.lo.v.str < p {
		return false
	}
	succ, ok := prefixSuccessor(p)
	if !ok {
		return true // every string >= p starts with p
	}
	if !s.hi.set {
		return false
	}
	return s.hi.v.str < succ || s.hi.v.str == succ && s.hi.open
}

// impliesContains reports whether every admitted string contains sub.
func (s *attrSet) impliesContains(sub string) bool {
	if strings.Contains(s.guaranteedPrefix(), sub) {
		return true
	}
	for _, q := range s.suffixes {
		if strings.Contains(q, sub) {
			return true
		}
	}
	for _, q := range s.contains {
		if strings.Contains(q, sub) {
			return true
		}
	}
	return false
}

// Overlaps reports whether some event could match both a and b. It is false
// only when the filters are provably disjoint: their conjunction has an
// attribute whose constraints no value satisfies.
func Overlaps(a, b Filter) bool {
	return Satisfiable(a.And(b))
}

// Satisfiable reports whether some event could match f; it is false only
// when f provably matches nothing.
func Satisfiable(f Filter) bool {
	_, empty := filterSets(f)
	return !empty
}
