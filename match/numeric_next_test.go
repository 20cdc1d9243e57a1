package match

import (
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
