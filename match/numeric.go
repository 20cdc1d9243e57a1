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
