package poset

import (
	"fmt"
	"math"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestPointBuckets: numeric equalities bucket in the candidate index
// (a == 5 is the point span [5, 5]), and every structure, with the index
// forced on, keeps its invariants and matches as Scan does over filters
// whose points are written as ints, as floats, as -0 and 0, as a closed
// interval, and beside ranges and string equalities that cover them or
// that they cover.
func TestPointBuckets(t *testing.T) {
	negZero := match.MustFloat(math.Copysign(0, -1))
	var fs []match.Filter
	for i := range 40 {
		v := int64(i % 7)
		fs = append(fs,
			match.MustFilter(match.Constraint{Attr: "a", Op: match.OpEq, Val: match.Int(v)}),
			match.MustFilter(match.Constraint{Attr: "a", Op: match.OpEq, Val: match.MustFloat(float64(v))}, match.Constraint{Attr: "b", Op: match.OpGt, Val: match.Int(int64(i % 3))}),
			match.MustFilter(match.Constraint{Attr: "a", Op: match.OpGe, Val: match.Int(v)}, match.Constraint{Attr: "a", Op: match.OpLe, Val: match.Int(v)}),
			match.MustFilter(match.Constraint{Attr: "a", Op: match.OpLt, Val: match.Int(v + 1)}),
			match.MustParse(fmt.Sprintf(`a == %d && s == "x"`, v)),
		)
	}
	fs = append(fs,
		match.MustFilter(match.Constraint{Attr: "a", Op: match.OpEq, Val: negZero}),
		match.MustFilter(match.Constraint{Attr: "a", Op: match.OpEq, Val: match.Int(0)}, match.Constraint{Attr: "b", Op: match.OpExists}),
		match.MustParse("a >= -1 && a <= 1"),
	)
	events := allEvents()
	for _, st := range allStructures {
		c := st.make(Config{})
		forceIndex(c)
		scan := match.NewScan()
		from := map[match.ID]Iface{}
		for i, f := range fs {
			if err := c.Add(match.ID(i), Iface(i%2), f); err != nil {
				t.Fatal(err)
			}
			scan.Insert(match.ID(i), f)
			from[match.ID(i)] = Iface(i % 2)
			if err := st.check(c); err != nil {
				t.Fatalf("%s after %d (%s): %v", st.name, i, f, err)
			}
		}
		if err := checkMatch(c, scan, from, events); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for i := 0; i < len(fs); i += 3 {
			if err := c.Delete(match.ID(i)); err != nil {
				t.Fatal(err)
			}
			scan.Delete(match.ID(i))
			delete(from, match.ID(i))
			if err := st.check(c); err != nil {
				t.Fatalf("%s after deleting %d: %v", st.name, i, err)
			}
		}
		if err := checkMatch(c, scan, from, events); err != nil {
			t.Fatalf("%s after deletes: %v", st.name, err)
		}
	}
}
