package match

import (
	"cmp"
	"math"
)

// compareNumbers orders two numeric Values (int or float) by exact value.
func compareNumbers(a, b Value) int {
	switch {
	case a.kind == KindInt && b.kind == KindInt:
		return cmp.Compare(int64(a.bits), int64(b.bits))
	case a.kind == KindFloat && b.kind == KindFloat:
		return cmp.Compare(math.Float64frombits(a.bits), math.Float64frombits(b.bits))
	case a.kind == KindInt:
		return cmpIntFloat(int64(a.bits), math.Float64frombits(b.bits))
	default:
		return -cmpIntFloat(int64(b.bits), math.Float64frombits(a.bits))
	}
}

// cmpIntFloat compares an int64 with a finite float64 exactly, without
// rounding the int64: the float's integer part is exact as an int64 whenever
// it lies in the int64 range, and its fraction breaks ties.
func cmpIntFloat(i int64, f float64) int {
	const two63 = 9223372036854775808.0 // 2^63, exact in float64
	if f >= two63 {
		return -1
	}
	if f < -two63 {
		return 1
	}
	t := math.Trunc(f)
	if c := cmp.Compare(i, int64(t)); c != 0 {
		return c
	}
	// Integer parts are equal; the fraction f-t decides.
	switch frac := f - t; {
	case frac > 0:
		return -1
	case frac < 0:
		return 1
	}
	return 0
}

func floatBits(f float64) uint64 { return math.Float64bits(f) }

// ExactFloat returns the float64 equal to a numeric Value, and whether one
// exists (an int64 beyond 2^53 may have none): indexes use it to compare
// numbers as plain float64 keys where that is exact.
func ExactFloat(v Value) (float64, bool) { return exactFloat(v) }

// exactFloat is ExactFloat.
func exactFloat(v Value) (float64, bool) {
	if v.kind == KindFloat {
		return math.Float64frombits(v.bits), true
	}
	i := int64(v.bits)
	f := float64(i)
	if f >= 9223372036854775808.0 {
		return f, false
	}
	return f, int64(f) == i
}

// lowestNumber is the smallest number an event can carry (-MaxFloat64:
// NaN and infinities are rejected, and every int64 is above it).
var lowestNumber = Value{kind: KindFloat, bits: math.Float64bits(-math.MaxFloat64)}

// nextNumber returns the smallest int64 or float64 value above the
// numeric value v, in exact order, and false if there is none. Events
// carry only these values, so a range may hold fewer of them than its
// width suggests: none strictly between the floats 2^53 and 2^53+2 but
// the int 2^53+1, none at all between two adjacent floats.
func nextNumber(v Value) (Value, bool) {
	const two63 = 9223372036854775808.0 // 2^63, exact in float64
	var ni, nf Value
	okI, okF := false, false
	switch v.kind {
	case KindInt:
		i := int64(v.bits)
		if i < math.MaxInt64 {
			ni, okI = Int(i+1), true
		}
		f := float64(i) // the nearest float; the next one if not above i
		if cmpIntFloat(i, f) >= 0 {
			f = math.Nextafter(f, math.Inf(1))
		}
		nf, okF = Value{kind: KindFloat, bits: math.Float64bits(f)}, true
	case KindFloat:
		f := math.Float64frombits(v.bits)
		switch t := math.Floor(f); { // exact; the int after it in int64 arithmetic
		case t < -two63:
			ni, okI = Int(math.MinInt64), true
		case t < two63 && int64(t) < math.MaxInt64:
			ni, okI = Int(int64(t)+1), true
		}
		if n := math.Nextafter(f, math.Inf(1)); !math.IsInf(n, 1) {
			nf, okF = Value{kind: KindFloat, bits: math.Float64bits(n)}, true
		}
	}
	switch {
	case okI && okF:
		if compareNumbers(ni, nf) <= 0 {
			return ni, true
		}
		return nf, true
	case okI:
		return ni, true
	}
	return nf, okF
}

// prevNumber returns the largest int64 or float64 value below the numeric
// value v, in exact order, and false if there is none (nextNumber's
// mirror).
func prevNumber(v Value) (Value, bool) {
	const two63 = 9223372036854775808.0 // 2^63, exact in float64
	var ni, nf Value
	okI, okF := false, false
	switch v.kind {
	case KindInt:
		i := int64(v.bits)
		if i > math.MinInt64 {
			ni, okI = Int(i-1), true
		}
		f := float64(i) // the nearest float; the previous one if not below i
		if cmpIntFloat(i, f) <= 0 {
			f = math.Nextafter(f, math.Inf(-1))
		}
		nf, okF = Value{kind: KindFloat, bits: math.Float64bits(f)}, true
	case KindFloat:
		f := math.Float64frombits(v.bits)
		switch t := math.Ceil(f); { // exact; the int before it in int64 arithmetic
		case t >= two63:
			ni, okI = Int(math.MaxInt64), true
		case t > -two63:
			ni, okI = Int(int64(t)-1), true
		}
		if n := math.Nextafter(f, math.Inf(-1)); !math.IsInf(n, -1) {
			nf, okF = Value{kind: KindFloat, bits: math.Float64bits(n)}, true
		}
	}
	switch {
	case okI && okF:
		if compareNumbers(ni, nf) >= 0 {
			return ni, true
		}
		return nf, true
	case okI:
		return ni, true
	}
	return nf, okF
}

// NumberHull returns the smallest and the largest int64 or float64 value
// that the constraints cs, all on one attribute, admit, each as the
// nearest float64 (-Inf or +Inf where unbounded), and false when cs admit
// no number, compare with no number, or are not all numeric comparisons,
// equalities, exclusions and exists. Events carry only int64 and float64 values, so the smallest
// admitted value may lie above every bound written in cs (a > 2^53+1
// admits nothing below 2^53+2; a >= 3 && a != 3 nothing below the float
// after 3); summaries that test covering by interval containment need
// these values, not the bounds, to be complete. Rounding to float64 is
// monotone, so a covered set's hull still lies within its coverer's.
func NumberHull(cs []Constraint) (lo, hi float64, ok bool) {
	var s attrSet
	for _, c := range cs {
		switch {
		case c.Op == OpExists:
		case c.Op == OpPrefix || c.Val.kind.class() != classNumber:
			return 0, 0, false
		default:
			s.add(c)
		}
	}
	s.finish()
	if s.empty || s.cls != classNumber {
		return 0, 0, false
	}
	lo, hi = math.Inf(-1), math.Inf(1)
	if s.lo.set {
		v, ok := s.extreme(s.lo, nextNumber)
		if !ok {
			return 0, 0, false
		}
		lo = v.AsFloat()
	}
	if s.hi.set {
		v, ok := s.extreme(s.hi, prevNumber)
		if !ok {
			return 0, 0, false
		}
		hi = v.AsFloat()
	}
	return lo, hi, true
}

// extreme walks from bound b inwards with step (nextNumber from the lower
// end, prevNumber from the upper) to the first value s admits, past at
// most one value per excluded point.
func (s *attrSet) extreme(b bound, step func(Value) (Value, bool)) (Value, bool) {
	v, ok := b.v, true
	if b.open {
		v, ok = step(v)
	}
	for i := 0; ok && i <= len(s.ne); i++ {
		if s.admits(v) {
			return v, true
		}
		v, ok = step(v)
	}
	return Value{}, false
}
