package bench

import (
	"slices"

	"testing"

	"pgregory.net/rapid"

	"github.com/sift-pubsub/sift/match"
)

// Attribute names exercising plain identifiers, a dotted name and names
// that collide with expr's keywords and builtins.
var exprTestAttrs = []string{"a", "b", "x.y", "len", "in"}

func genValue() *rapid.Generator[match.Value] {
	return rapid.OneOf(
		rapid.Map(rapid.SampledFrom([]string{"", "a", "ab", "b", "a\"b", "é\n", "\\z"}), match.Str),
		rapid.Map(rapid.Int64Range(-3, 3), match.Int),
		rapid.Map(rapid.SampledFrom([]int64{1<<53 + 1, -(1<<53 + 1)}), match.Int),
		rapid.Map(rapid.SampledFrom([]float64{-2.5, 0, 1, 1.5, 3, 1e20}), match.MustFloat),
		rapid.Map(rapid.Bool(), match.Bool),
	)
}

func genConstraint() *rapid.Generator[match.Constraint] {
	return rapid.Custom(func(t *rapid.T) match.Constraint {
		attr := rapid.SampledFrom(exprTestAttrs).Draw(t, "attr")
		op := match.Op(rapid.IntRange(int(match.OpEq), int(match.OpExists)).Draw(t, "op"))
		switch {
		case op == match.OpExists:
			return match.Constraint{Attr: attr, Op: op}
		case op.IsStringOp():
			s := rapid.SampledFrom([]string{"", "a", "b", "é"}).Draw(t, "s")
			return match.Constraint{Attr: attr, Op: op, Val: match.Str(s)}
		}
		return match.Constraint{Attr: attr, Op: op, Val: genValue().Draw(t, "val")}
	})
}

func genEvent() *rapid.Generator[match.Event] {
	return rapid.Custom(func(t *rapid.T) match.Event {
		var attrs []match.Attr
		for _, name := range exprTestAttrs {
			if rapid.Bool().Draw(t, "has-"+name) {
				attrs = append(attrs, match.Attr{Name: name, Value: genValue().Draw(t, name)})
			}
		}
		return match.MustEvent(attrs...)
	})
}

// TestExprAgreesWithScan is the differential test of the expr translation:
// on every event Exact accepts, Expr returns what Scan returns.
func TestExprAgreesWithScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x, s := NewExpr(), match.NewScan()
		n := rapid.IntRange(1, 8).Draw(t, "subs")
		for i := range n {
			cs := rapid.SliceOfN(genConstraint(), 0, 3).Draw(t, "constraints")
			f := match.MustFilter(cs...)
			if err := x.Insert(match.ID(i), f); err != nil {
				t.Fatalf("insert %s: %v", f, err)
			}
			s.Insert(match.ID(i), f)
		}
		e := genEvent().Draw(t, "event")
		if !x.Exact(e) {
			return
		}
		got := match.SortIDs(x.Match(e, nil))
		want := match.SortIDs(s.Match(e, nil))
		if !slices.Equal(got, want) {
			for i := range n {
				f, _ := s.Filter(match.ID(i))
				t.Logf("sub %d: %s  =>  %s", i, f, ExprSource(f))
			}
			t.Fatalf("event %s: expr matched %v, scan %v", e, got, want)
		}
	})
}

func TestExprSourceReadsNaturally(t *testing.T) {
	f := match.MustParse(`symbol == "IBM" && price < 10.5 && venue != "NYSE"`)
	want := `price < 10.5 && symbol == "IBM" && (type(venue) == "string" && venue != "NYSE")`
	if got := ExprSource(f); got != want {
		t.Fatalf("ExprSource = %s\nwant          %s", got, want)
	}
}

func TestExprInsertDelete(t *testing.T) {
	x := NewExpr()
	f := match.MustParse(`a > 1`)
	if err := x.Insert(1, f); err != nil {
		t.Fatal(err)
	}
	if err := x.Insert(1, f); err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	x.Insert(2, match.MustParse(`a > 5`))
	if err := x.Delete(1); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete(1); err == nil {
		t.Fatal("deleting an absent id succeeded")
	}
	got := x.Match(match.MustEvent(match.Attr{Name: "a", Value: match.Int(9)}), nil)
	if x.Len() != 1 || len(got) != 1 || got[0] != 2 {
		t.Fatalf("after delete: len %d, matches %v", x.Len(), got)
	}
}
