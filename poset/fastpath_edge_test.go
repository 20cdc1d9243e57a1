package poset

import (
	"math"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// Values where the fast paths' float summaries could go wrong: integers
// around 2^53 (not all floats), negative zero, and strings and bools on
// the same attribute as numbers.
var edgeValues = []match.Value{
	match.Int(1 << 53), match.Int(1<<53 + 1), match.Int(1<<53 + 2), match.Int(-(1 << 53) - 1),
	match.MustFloat(1 << 53), match.MustFloat(1<<53 + 2), match.MustFloat(math.Copysign(0, -1)),
	match.Int(0), match.Int(-1), match.Int(3), match.Int(4), match.MustFloat(2.5),
	match.Str(""), match.Str("x"), match.Str("xy"), match.Str("y"), match.Bool(false), match.Bool(true),
}

// genEdgeFilter draws up to three constraints on a and s, any operator,
// any value of edgeValues (prefix takes a string).
func genEdgeFilter(t *rapid.T, name string) match.Filter {
	var cs []match.Constraint
	for range rapid.IntRange(1, 3).Draw(t, name+"n") {
		c := match.Constraint{
			Attr: rapid.SampledFrom([]string{"a", "s"}).Draw(t, name+"attr"),
			Op:   rapid.SampledFrom([]match.Op{match.OpEq, match.OpNe, match.OpLt, match.OpLe, match.OpGt, match.OpGe, match.OpExists, match.OpPrefix}).Draw(t, name+"op"),
		}
		if c.Op != match.OpExists {
			c.Val = rapid.SampledFrom(edgeValues).Draw(t, name+"v")
			if c.Op == match.OpPrefix && c.Val.Kind() != match.KindString {
				c.Val = match.Str("x")
			}
		}
		cs = append(cs, c)
	}
	f, err := match.NewFilter(cs...)
	if err != nil || !match.Satisfiable(f) {
		t.Skip("not a satisfiable filter")
	}
	return f
}

// TestFastPathsOnEdgeValues: for keys signed by a structure, disjoint and
// mayCover decide as the box walk does, disjoint filters share no event
// of the grid, and mayCover never rules out a covering, on values where
// float summaries are lossy and on attributes holding several types.
func TestFastPathsOnEdgeValues(t *testing.T) {
	var events []match.Event
	for _, va := range edgeValues {
		for _, vs := range edgeValues {
			events = append(events, match.MustEvent(match.Attr{Name: "a", Value: va}, match.Attr{Name: "s", Value: vs}))
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		a, b := genEdgeFilter(t, "a"), genEdgeFilter(t, "b")
		c := NewPoset(Config{}).core
		ka, kb := c.newNode(a, a.String()).key, c.newNode(b, b.String()).key
		fa, fb := ka, kb
		fa, fb = boxed(fa), boxed(fb)
		d := disjoint(&ka, &kb)
		if full := disjoint(&fa, &fb); full != d {
			t.Fatalf("disjoint(%s, %s) = %v, but %v from the boxes", a, b, d, full)
		}
		for _, e := range events {
			if d && a.Matches(e) && b.Matches(e) {
				t.Fatalf("disjoint(%s, %s) but %s matches both", a, b, e)
			}
		}
		for _, k := range [][2]*key{{&ka, &kb}, {&kb, &ka}, {&fa, &fb}, {&fb, &fa}} {
			m := mayCover(k[0], k[1])
			if match.Covers(k[0].f, k[1].f) && !m {
				t.Fatalf("%s covers %s but mayCover is false", k[0].f, k[1].f)
			}
		}
		if mayCover(&ka, &kb) != mayCover(&fa, &fb) || mayCover(&kb, &ka) != mayCover(&fb, &fa) {
			t.Fatalf("mayCover of %s and %s: the fast path and the boxes disagree", a, b)
		}
	})
}
