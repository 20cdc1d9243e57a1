package preds

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

var values = []match.Value{match.Int(-1), match.Int(0), match.Int(2), match.MustFloat(0.5), match.MustFloat(2),
	match.Int(1<<53 + 1), match.MustFloat(1 << 53), match.Str(""), match.Str("ab"), match.Str("b"), match.Bool(false), match.Bool(true)}

var ops = []match.Op{match.OpEq, match.OpNe, match.OpLt, match.OpLe, match.OpGt, match.OpGe,
	match.OpPrefix, match.OpSuffix, match.OpContains, match.OpExists}

func constraintGen() *rapid.Generator[match.Constraint] {
	return rapid.Custom(func(t *rapid.T) match.Constraint {
		c := match.Constraint{Attr: "a", Op: rapid.SampledFrom(ops).Draw(t, "op")}
		switch {
		case c.Op == match.OpExists:
		case c.Op.IsStringOp():
			c.Val = rapid.SampledFrom([]match.Value{match.Str(""), match.Str("a"), match.Str("b"), match.Str("ab")}).Draw(t, "s")
		default:
			c.Val = rapid.SampledFrom(values).Draw(t, "v")
		}
		return c
	})
}

// TestVisitIsBruteForce: across adds and removes, the slots Visit reports
// for a value are exactly, with multiplicity, those of the stored
// predicates that hold for it, and Len counts the predicates.
func TestVisitIsBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := New()
		type pred struct {
			c match.Constraint
			s uint32
		}
		var model []pred
		t.Repeat(map[string]func(*rapid.T){
			"add": func(t *rapid.T) {
				p := pred{constraintGen().Draw(t, "c"), rapid.Uint32Range(0, 5).Draw(t, "s")}
				a.Add(p.c, p.s)
				model = append(model, p)
			},
			"remove": func(t *rapid.T) {
				if len(model) == 0 {
					t.Skip()
				}
				i := rapid.IntRange(0, len(model)-1).Draw(t, "i")
				if !a.Remove(model[i].c, model[i].s) {
					t.Fatalf("remove %v of %d failed", model[i].c, model[i].s)
				}
				model = slices.Delete(model, i, i+1)
			},
			"visit": func(t *rapid.T) {
				v := rapid.SampledFrom(values).Draw(t, "v")
				var got, want []uint32
				a.Visit(v, func(run []uint32) { got = append(got, run...) })
				for _, p := range model {
					if p.c.Holds(v, true) {
						want = append(want, p.s)
					}
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("visit %v: got %v, want %v", v, got, want)
				}
			},
			"": func(t *rapid.T) {
				if a.Len() != len(model) {
					t.Fatalf("Len %d, want %d", a.Len(), len(model))
				}
			},
		})
	})
}
