package match

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Values the property tests draw constraint constants from: a small grid, so
// that the witness search below (constants and points between and beside
// them) finds a counter-example whenever one exists on numbers and on
// string intervals.
var (
	propInts    = []int64{-2, 0, 1, 3, 1 << 53, 1<<53 + 1}
	propFloats  = []float64{-1.5, 0, 0.5, 1, 3, 9007199254740992}
	propStrings = []string{"", "a", "ab", "abc", "ac", "b", "ab\xff"}
	propAttrs   = []string{"x", "y"}
)

func genValue(t *rapid.T, label string) Value {
	switch rapid.IntRange(0, 5).Draw(t, label+"kind") {
	case 0, 1:
		return Int(rapid.SampledFrom(propInts).Draw(t, label+"int"))
	case 2:
		return MustFloat(rapid.SampledFrom(propFloats).Draw(t, label+"float"))
	case 3, 4:
		return Str(rapid.SampledFrom(propStrings).Draw(t, label+"str"))
	}
	return Bool(rapid.Bool().Draw(t, label+"bool"))
}

// genConstraint draws a constraint; complete limits it to the operators on
// which Covers promises completeness (no suffix, contains).
func genConstraint(t *rapid.T, label string, attrs []string, complete bool) Constraint {
	attr := rapid.SampledFrom(attrs).Draw(t, label+"attr")
	ops := []Op{OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpPrefix, OpExists}
	if !complete {
		ops = append(ops, OpSuffix, OpContains)
	}
	op := rapid.SampledFrom(ops).Draw(t, label+"op")
	switch {
	case op == OpExists:
		return Constraint{Attr: attr, Op: op}
	case op.IsStringOp():
		return Constraint{Attr: attr, Op: op, Val: Str(rapid.SampledFrom(propStrings).Draw(t, label+"s"))}
	}
	return Constraint{Attr: attr, Op: op, Val: genValue(t, label)}
}

func genFilter(t *rapid.T, label string, attrs []string, complete bool) Filter {
	n := rapid.IntRange(0, 3).Draw(t, label+"n")
	cs := make([]Constraint, n)
	for i := range cs {
		cs[i] = genConstraint(t, label, attrs, complete)
	}
	return MustFilter(cs...)
}

// witnessValues returns candidate values for one attribute: every constant
// the filters use, points just beside and between them, strings just above
// and below, and one value of every type.
func witnessValues(fs ...Filter) []Value {
	var nums []float64
	vals := []Value{Bool(false), Bool(true), Str(""), Str("\xff\xff"), Int(-1 << 62), Int(1 << 62)}
	for _, f := range fs {
		for _, c := range f.cs {
			if !c.Val.IsValid() {
				continue
			}
			vals = append(vals, c.Val)
			switch c.Val.kind {
			case KindInt:
				i := c.Val.AsInt()
				vals = append(vals, Int(i-1), Int(i+1))
				nums = append(nums, float64(i))
			case KindFloat:
				nums = append(nums, c.Val.AsFloat())
			case KindString:
				s := c.Val.str
				vals = append(vals, Str(s+"\x00"), Str(s+"a"), Str(s+"\xff"), Str("z"+s), Str("a"+s+"z"))
				if len(s) > 0 {
					vals = append(vals, Str(s[:len(s)-1]))
				}
				if succ, ok := prefixSuccessor(s); ok {
					vals = append(vals, Str(succ))
				}
			}
		}
	}
	slices.Sort(nums)
	for i, f := range nums {
		vals = append(vals, MustFloat(f-0.25), MustFloat(f+0.25), MustFloat(math.Nextafter(f, math.Inf(1))), MustFloat(math.Nextafter(f, math.Inf(-1))))
		if i > 0 {
			vals = append(vals, MustFloat((nums[i-1]+f)/2))
		}
	}
	return vals
}

// findWitness searches, by construction over the witness values, for an
// event that matches b but not a.
func findWitness(a, b Filter, attrs []string) (Event, bool) {
	cands := witnessValues(a, b)
	var attrsOut []Attr
	var rec func(i int) (Event, bool)
	rec = func(i int) (Event, bool) {
		if i == len(attrs) {
			e := MustEvent(attrsOut...)
			return e, b.Matches(e) && !a.Matches(e)
		}
		if e, ok := rec(i + 1); ok { // attribute absent
			return e, true
		}
		for _, v := range cands {
			attrsOut = append(attrsOut, Attr{Name: attrs[i], Value: v})
			e, ok := rec(i + 1)
			attrsOut = attrsOut[:len(attrsOut)-1]
			if ok {
				return e, true
			}
		}
		return Event{}, false
	}
	return rec(0)
}

func TestCoversSound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genFilter(t, "a", propAttrs, false)
		b := genFilter(t, "b", propAttrs, false)
		if !Covers(a, b) {
			return
		}
		if e, ok := findWitness(a, b, propAttrs); ok {
			t.Fatalf("Covers(%v, %v) but %v matches only the second", a, b, e)
		}
	})
}

func TestCoversCompleteOnOneAttribute(t *testing.T) {
	attrs := []string{"x"}
	rapid.Check(t, func(t *rapid.T) {
		a := genFilter(t, "a", attrs, true)
		b := genFilter(t, "b", attrs, true)
		if Covers(a, b) {
			return
		}
		if _, ok := findWitness(a, b, attrs); !ok {
			t.Fatalf("Covers(%v, %v) = false, but no event matches the second without the first", a, b)
		}
	})
}

func TestOverlapsSound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genFilter(t, "a", propAttrs, false)
		b := genFilter(t, "b", propAttrs, false)
		if Overlaps(a, b) {
			return
		}
		// No witness event may match both.
		both := a.And(b)
		if e, ok := findWitness(MustParse("x == 1 && x == 2"), both, propAttrs); ok {
			t.Fatalf("Overlaps(%v, %v) = false but %v matches both", a, b, e)
		}
	})
}

func TestMergeCoversInputs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genFilter(t, "a", propAttrs, false)
		b := genFilter(t, "b", propAttrs, false)
		m, perfect := Merge(a, b)
		for _, in := range []Filter{a, b} {
			if e, ok := findWitness(m, in, propAttrs); ok {
				t.Fatalf("Merge(%v, %v) = %v misses %v matched by %v", a, b, m, e, in)
			}
		}
		if !perfect {
			return
		}
		// A perfect merge matches nothing beyond the union.
		union := func(e Event) bool { return a.Matches(e) || b.Matches(e) }
		cands := witnessValues(a, b, m)
		for _, v := range cands {
			for _, w := range append(cands[:0:0], cands...) {
				e := MustEvent(Attr{Name: "x", Value: v}, Attr{Name: "y", Value: w})
				if m.Matches(e) && !union(e) {
					t.Fatalf("perfect Merge(%v, %v) = %v matches %v, which neither input matches", a, b, m, e)
				}
			}
		}
	})
}
