package match

import "slices"

// Merge returns a filter m that covers both a and b. perfect reports that m
// matches exactly the events matching a or b:
//
//   - when one filter covers the other, m is the covering one (perfect);
//   - when a and b constrain the same attributes identically except one, on
//     which both allow one interval of one type (from ==, <, <=, >, >=,
//     prefix) and the two intervals touch or overlap, m replaces that
//     attribute with the union interval (perfect);
//   - otherwise m keeps, for each attribute both constrain, the hull of the
//     two intervals (or just `exists` when the types differ), and drops the
//     attributes only one constrains (imperfect: m may match more).
func Merge(a, b Filter) (m Filter, perfect bool) {
	if Covers(a, b) {
		return a, true
	}
	if Covers(b, a) {
		return b, true
	}
	if m, ok := mergeOnOneAttr(a, b); ok {
		return m, true
	}
	return hullMerge(a, b), false
}

// mergeOnOneAttr is the perfect merge of filters that differ on one
// attribute whose two value sets are intervals with an exact union.
func mergeOnOneAttr(a, b Filter) (Filter, bool) {
	attrs := unionAttrs(a, b)
	var diff string
	n := 0
	for _, attr := range attrs {
		if !slices.Equal(a.onAttr(attr), b.onAttr(attr)) {
			diff = attr
			n++
		}
	}
	if n != 1 {
		return Filter{}, false
	}
	ca, cb := a.onAttr(diff), b.onAttr(diff)
	if len(ca) == 0 || len(cb) == 0 {
		return Filter{}, false
	}
	sa, sb := newAttrSet(ca), newAttrSet(cb)
	if !sa.isInterval() || !sb.isInterval() || sa.cls != sb.cls || !intervalsJoin(&sa, &sb) {
		return Filter{}, false
	}
	h := hull(&sa, &sb)
	cs := h.intervalConstraints(diff)
	if cs == nil {
		return Filter{}, false
	}
	rest := slices.DeleteFunc(slices.Clone(a.cs), func(c Constraint) bool { return c.Attr == diff })
	return canonicalFilter(append(rest, cs...)), true
}

// hullMerge keeps, per attribute common to a and b, constraints that cover
// both sides.
func hullMerge(a, b Filter) Filter {
	sa, emptyA := filterSets(a)
	sb, emptyB := filterSets(b)
	switch {
	case emptyA:
		return b
	case emptyB:
		return a
	}
	var cs []Constraint
	for _, attr := range unionAttrs(a, b) {
		x, okA := sa.get(attr)
		y, okB := sb.get(attr)
		if !okA || !okB {
			continue
		}
		if x.cls != y.cls || x.cls == classNone {
			cs = append(cs, Constraint{Attr: attr, Op: OpExists})
			continue
		}
		h := hull(x, y)
		hc := h.intervalConstraints(attr)
		if hc == nil {
			hc = []Constraint{{Attr: attr, Op: OpExists}}
		}
		cs = append(cs, hc...)
		if x.cls == classString {
			if suf := commonSuffix(x.longestSuffix(), y.longestSuffix()); suf != "" {
				cs = append(cs, Constraint{Attr: attr, Op: OpSuffix, Val: Str(suf)})
			}
		}
	}
	return canonicalFilter(cs)
}

// isInterval reports whether s is exactly an interval of one class, with no
// excluded points, suffixes or substrings.
func (s *attrSet) isInterval() bool {
	return !s.empty && s.cls != classNone && len(s.ne) == 0 && len(s.suffixes) == 0 && len(s.contains) == 0
}

// intervalsJoin reports whether the union of two intervals of one class is
// itself an interval: they overlap or touch with no value left between.
func intervalsJoin(a, b *attrSet) bool {
	if a.cls == classBool {
		h := hull(a, b)
		for _, v := range h.bools() {
			if !a.admits(v) && !b.admits(v) {
				return false
			}
		}
		return true
	}
	return !gapBetween(a.hi, b.lo) && !gapBetween(b.hi, a.lo)
}

// gapBetween reports whether some value lies above hi and below lo, that is
// the interval ending at hi and the one starting at lo neither overlap nor
// touch.
func gapBetween(hi, lo bound) bool {
	if !hi.set || !lo.set {
		return false
	}
	c, _ := Compare(hi.v, lo.v)
	return c < 0 || c == 0 && hi.open && lo.open
}

// hull returns the smallest interval containing both a and b.
func hull(a, b *attrSet) attrSet {
	h := attrSet{cls: a.cls}
	h.lo = looserLo(a.lo, b.lo)
	h.hi = looserHi(a.hi, b.hi)
	if a.cls == classString {
		h.prefix = commonPrefix(a.guaranteedPrefix(), b.guaranteedPrefix())
	}
	return h
}

func looserLo(x, y bound) bound {
	if !x.set || !y.set {
		return bound{}
	}
	switch c, _ := Compare(x.v, y.v); {
	case c < 0:
		return x
	case c > 0:
		return y
	}
	x.open = x.open && y.open
	return x
}

func looserHi(x, y bound) bound {
	if !x.set || !y.set {
		return bound{}
	}
	switch c, _ := Compare(x.v, y.v); {
	case c > 0:
		return x
	case c < 0:
		return y
	}
	x.open = x.open && y.open
	return x
}

// intervalConstraints writes an interval as constraints on attr, or returns
// nil when it has no bound (the type alone cannot be expressed).
func (s *attrSet) intervalConstraints(attr string) []Constraint {
	if p, ok := s.point(); ok {
		return []Constraint{{Attr: attr, Op: OpEq, Val: p}}
	}
	var cs []Constraint
	if s.loConstrains() {
		op := OpGe
		if s.lo.open {
			op = OpGt
		}
		cs = append(cs, Constraint{Attr: attr, Op: op, Val: s.lo.v})
	}
	if s.hi.set {
		op := OpLe
		if s.hi.open {
			op = OpLt
		}
		cs = append(cs, Constraint{Attr: attr, Op: op, Val: s.hi.v})
	}
	if s.prefix != "" {
		cs = append(cs, Constraint{Attr: attr, Op: OpPrefix, Val: Str(s.prefix)})
	}
	return cs
}

func unionAttrs(a, b Filter) []string {
	attrs := append(a.Attrs(), b.Attrs()...)
	slices.Sort(attrs)
	return slices.Compact(attrs)
}

func commonSuffix(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return a[len(a)-i:]
}
