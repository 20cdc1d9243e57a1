package match

import (
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// TestNextNumber: nextNumber's value is above its argument and no int64
// or float64 lies strictly between them (every int and float next to
// either end is checked, from a grid around the precision edges and from
// random values).
func TestNextNumber(t *testing.T) {
	edges := []float64{0, 1, -1, 0.5, 1 << 52, 1 << 53, 1<<53 + 2, 1 << 62, 1 << 63, -(1 << 63), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}
	rapid.Check(t, func(t *rapid.T) {
		var v Value
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			v = Int(rapid.Int64().Draw(t, "int"))
		case 1:
			v = Int(int64(rapid.SampledFrom(edges[:8]).Draw(t, "edge")) + rapid.Int64Range(-3, 3).Draw(t, "off"))
		case 2:
			v = MustFloat(rapid.SampledFrom(edges).Draw(t, "fedge"))
		default:
			v = MustFloat(rapid.Float64Range(-1e300, 1e300).Draw(t, "float"))
		}
		n, ok := nextNumber(v)
		if !ok {
			if v.kind != KindFloat || math.Float64frombits(v.bits) != math.MaxFloat64 {
				t.Fatalf("no number after %v", v)
			}
			return
		}
		if compareNumbers(n, v) <= 0 {
			t.Fatalf("nextNumber(%v) = %v, not above it", v, n)
		}
		for _, c := range neighbours(v, n) {
			if compareNumbers(v, c) < 0 && compareNumbers(c, n) < 0 {
				t.Fatalf("nextNumber(%v) = %v, but %v lies between", v, n, c)
			}
		}
	})
}

// neighbours returns the ints and floats next to the numeric values vs.
func neighbours(vs ...Value) []Value {
	var out []Value
	for _, v := range vs {
		f := v.AsFloat()
		for _, g := range []float64{f, math.Nextafter(f, math.Inf(1)), math.Nextafter(f, math.Inf(-1))} {
			if !math.IsInf(g, 0) {
				out = append(out, MustFloat(g))
			}
		}
		if v.kind == KindInt {
			i := v.AsInt()
			for _, d := range []int64{-1, 1} {
				if j := i + d; (d > 0) == (j > i) {
					out = append(out, Int(j))
				}
			}
			continue
		}
		if t := math.Floor(f); t >= -(1<<63) && t < 1<<63 {
			i := int64(t)
			out = append(out, Int(i))
			if i < math.MaxInt64 {
				out = append(out, Int(i+1))
			}
		}
	}
	return out
}

// TestCoversNarrowNumericRange: ranges that hold few or no values an
// event can carry (above 2^53 consecutive floats are 2 apart) are covered
// exactly as those values say (the first case is the one rapid found).
func TestCoversNarrowNumericRange(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"x == -2", "x < 9007199254740993 && x > 9007199254740992.0", true}, // b holds no number
		{"x == 9007199254740993", "x > 9007199254740992.0 && x <= 9007199254740993", true},
		{"x <= 9007199254740993", "x > 9007199254740992.0 && x < 9007199254740994.0", true},
		{"x >= 9007199254740993", "x > 9007199254740992.0 && x < 9007199254740996", true},
		{"x != 9007199254740994", "x > 9007199254740992.0 && x < 9007199254740995 && x != 9007199254740993", false},
		{"x == 9007199254740993", "x > 9007199254740992.0 && x < 9007199254740995", false},
		{"x < 3", "x > 1 && x < 4", false},
	} {
		a, b := MustParse(c.a), MustParse(c.b)
		if got := Covers(a, b); got != c.want {
			t.Errorf("Covers(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// drawNumber draws an int or a float, often next to a precision edge.
func drawNumber(t *rapid.T, label string) Value {
	edges := []float64{0, 1, -1, 0.5, 1 << 52, 1 << 53, 1<<53 + 2, 1 << 62, 1 << 63, -(1 << 63), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}
	switch rapid.IntRange(0, 3).Draw(t, label+"kind") {
	case 0:
		return Int(rapid.Int64().Draw(t, label+"int"))
	case 1:
		return Int(int64(rapid.SampledFrom(edges[:8]).Draw(t, label+"edge")) + rapid.Int64Range(-3, 3).Draw(t, label+"off"))
	case 2:
		return MustFloat(rapid.SampledFrom(edges).Draw(t, label+"fedge"))
	}
	return MustFloat(rapid.Float64Range(-1e300, 1e300).Draw(t, label+"float"))
}

// TestPrevNumber: prevNumber's value is below its argument and no int64
// or float64 lies strictly between them, and it undoes nextNumber.
func TestPrevNumber(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := drawNumber(t, "v")
		p, ok := prevNumber(v)
		if !ok {
			if v.kind != KindFloat || math.Float64frombits(v.bits) != -math.MaxFloat64 {
				t.Fatalf("no number before %v", v)
			}
			return
		}
		if compareNumbers(p, v) >= 0 {
			t.Fatalf("prevNumber(%v) = %v, not below it", v, p)
		}
		for _, c := range neighbours(v, p) {
			if compareNumbers(p, c) < 0 && compareNumbers(c, v) < 0 {
				t.Fatalf("prevNumber(%v) = %v, but %v lies between", v, p, c)
			}
		}
		if n, ok := nextNumber(p); !ok || compareNumbers(n, v) != 0 {
			t.Fatalf("nextNumber(prevNumber(%v)) = %v, %v", v, n, ok)
		}
	})
}

// TestNumberHull: the hull's ends are the rounded smallest and largest
// numbers the constraints admit. Constraints are drawn around a few
// numbers, so bounds and exclusions meet; the admitted numbers near every
// constraint's value (and near the hull's ends) are enumerated, and none
// lies outside the hull, while the hull's ends come from admitted numbers.
func TestNumberHull(t *testing.T) {
	ops := []Op{OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpExists}
	rapid.Check(t, func(t *rapid.T) {
		base := drawNumber(t, "base")
		var cs []Constraint
		for i := range rapid.IntRange(1, 4).Draw(t, "n") {
			v := base
			for range rapid.IntRange(0, 2).Draw(t, fmt.Sprint("steps", i)) {
				if n, ok := nextNumber(v); ok {
					v = n
				}
			}
			cs = append(cs, Constraint{Attr: "a", Op: rapid.SampledFrom(ops).Draw(t, fmt.Sprint("op", i)), Val: v})
			if cs[i].Op == OpExists {
				cs[i].Val = Value{}
			}
		}
		s := newAttrSet(cs)
		var admitted []Value
		for _, c := range cs {
			if c.Op == OpExists {
				continue
			}
			near := []Value{c.Val}
			for v, k := c.Val, 0; k < 4; k++ {
				if n, ok := nextNumber(v); ok {
					near, v = append(near, n), n
				}
			}
			for v, k := c.Val, 0; k < 4; k++ {
				if p, ok := prevNumber(v); ok {
					near, v = append(near, p), p
				}
			}
			for _, v := range near {
				if s.admits(v) {
					admitted = append(admitted, v)
				}
			}
		}
		lo, hi, ok := NumberHull(cs)
		if !ok {
			if !s.empty && s.cls == classNumber {
				t.Fatalf("NumberHull(%v) refused a numeric set that is not empty", cs)
			}
			return
		}
		if s.empty {
			t.Fatalf("NumberHull(%v) = [%v, %v] for an empty set", cs, lo, hi)
		}
		for _, v := range admitted {
			if f := v.AsFloat(); f < lo || f > hi {
				t.Fatalf("NumberHull(%v) = [%v, %v], but %v is admitted", cs, lo, hi, v)
			}
		}
		for _, end := range []float64{lo, hi} {
			if math.IsInf(end, 0) {
				continue
			}
			found := false
			for _, v := range admitted {
				found = found || v.AsFloat() == end
			}
			if !found {
				t.Fatalf("NumberHull(%v) = [%v, %v]: %v is no admitted number near a bound (%v)", cs, lo, hi, end, admitted)
			}
		}
	})
}
