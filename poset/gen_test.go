package poset

import (
	"fmt"
	"strings"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// Generators of small filters and events over few attributes and values, so
// that covering, equality and equivalence happen often.

var numAttrs = []string{"a", "b", "c"}

func genConstraint() *rapid.Generator[match.Constraint] {
	return rapid.Custom(func(t *rapid.T) match.Constraint {
		switch rapid.IntRange(0, 9).Draw(t, "kind") {
		case 0, 1, 2, 3, 4, 5:
			attr := rapid.SampledFrom(numAttrs).Draw(t, "attr")
			op := rapid.SampledFrom([]match.Op{match.OpEq, match.OpNe, match.OpLt, match.OpLe, match.OpGt, match.OpGe, match.OpExists}).Draw(t, "op")
			if op == match.OpExists {
				return match.Constraint{Attr: attr, Op: op}
			}
			v := match.Int(int64(rapid.IntRange(0, 6).Draw(t, "v")))
			if rapid.IntRange(0, 4).Draw(t, "float") == 0 {
				v = match.MustFloat(float64(rapid.IntRange(0, 12).Draw(t, "f")) / 2)
			}
			return match.Constraint{Attr: attr, Op: op, Val: v}
		case 6, 7, 8:
			op := rapid.SampledFrom([]match.Op{match.OpEq, match.OpPrefix, match.OpSuffix, match.OpContains, match.OpLt, match.OpGe}).Draw(t, "sop")
			s := rapid.StringOfN(rapid.SampledFrom([]rune("xy\x00")), 0, 3, -1).Draw(t, "s")
			return match.Constraint{Attr: "s", Op: op, Val: match.Str(s)}
		default:
			return match.Constraint{Attr: "t", Op: rapid.SampledFrom([]match.Op{match.OpEq, match.OpNe}).Draw(t, "bop"), Val: match.Bool(rapid.Bool().Draw(t, "b"))}
		}
	})
}

func genFilter() *rapid.Generator[match.Filter] {
	return rapid.Custom(func(t *rapid.T) match.Filter {
		cs := rapid.SliceOfN(genConstraint(), 0, 3).Draw(t, "cs")
		return match.MustFilter(cs...)
	})
}

func genEvent() *rapid.Generator[match.Event] {
	return rapid.Custom(func(t *rapid.T) match.Event {
		var attrs []match.Attr
		for _, a := range numAttrs {
			if rapid.IntRange(0, 5).Draw(t, "has"+a) > 0 {
				v := match.Int(int64(rapid.IntRange(-1, 7).Draw(t, a)))
				if rapid.Bool().Draw(t, a+"float") {
					v = match.MustFloat(float64(rapid.IntRange(-2, 14).Draw(t, a+"f")) / 2)
				}
				attrs = append(attrs, match.Attr{Name: a, Value: v})
			}
		}
		if rapid.Bool().Draw(t, "hass") {
			attrs = append(attrs, match.Attr{Name: "s", Value: match.Str(rapid.StringOfN(rapid.SampledFrom([]rune("xyz")), 0, 4, -1).Draw(t, "s"))})
		}
		if rapid.Bool().Draw(t, "hast") {
			attrs = append(attrs, match.Attr{Name: "t", Value: match.Bool(rapid.Bool().Draw(t, "t"))})
		}
		return match.MustEvent(attrs...)
	})
}

// allEvents is a fixed grid of events over the generators' attributes,
// used to compare Match with Scan exhaustively on small value ranges.
func allEvents() []match.Event {
	var out []match.Event
	vals := []match.Value{match.Int(0), match.Int(2), match.MustFloat(2.5), match.Int(3), match.Int(5), match.Int(7)}
	strs := []string{"", "x", "xy", "yx", "xyy", "zz"}
	for i, va := range vals {
		for j, vb := range vals {
			attrs := []match.Attr{{Name: "a", Value: va}, {Name: "b", Value: vb}}
			if (i+j)%3 != 0 {
				attrs = append(attrs, match.Attr{Name: "c", Value: vals[(i*7+j)%len(vals)]})
			}
			if (i+2*j)%4 != 0 {
				attrs = append(attrs, match.Attr{Name: "s", Value: match.Str(strs[(i+j)%len(strs)])})
			}
			attrs = append(attrs, match.Attr{Name: "t", Value: match.Bool((i*j)%2 == 0)})
			out = append(out, match.MustEvent(attrs...))
			if j == 0 {
				out = append(out, match.MustEvent(attrs[0]))
			}
		}
	}
	return append(out, match.MustEvent())
}

// describe renders ids for failure messages.
func describe(ids []match.ID) string {
	var b strings.Builder
	for _, id := range match.SortIDs(ids) {
		fmt.Fprintf(&b, "%d ", id)
	}
	return b.String()
}
