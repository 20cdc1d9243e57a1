package interval

import (
	"errors"
	"testing"

	"github.com/sift-pubsub/sift/baseline"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestIntervalIsTheConjunction checks that the folded interval holds for a
// number exactly when every constraint of the filter on that attribute
// does.
func TestIntervalIsTheConjunction(t *testing.T) {
	ops := []match.Op{match.OpEq, match.OpLt, match.OpLe, match.OpGt, match.OpGe}
	number := rapid.Custom(func(t *rapid.T) match.Value {
		n := rapid.IntRange(-3, 3).Draw(t, "n")
		if rapid.Bool().Draw(t, "float") {
			return match.MustFloat(float64(n) / 2)
		}
		return match.Int(int64(n))
	})
	rapid.Check(t, func(t *rapid.T) {
		var cs []match.Constraint
		for range rapid.IntRange(1, 4).Draw(t, "n") {
			cs = append(cs, match.Constraint{Attr: "a", Op: rapid.SampledFrom(ops).Draw(t, "op"), Val: number.Draw(t, "v")})
		}
		f := match.MustFilter(cs...)
		ivs, err := FromFilter("test", f)
		if err != nil || len(ivs) != 1 {
			t.Fatalf("FromFilter(%v) = %v, %v", f, ivs, err)
		}
		v := number.Draw(t, "event")
		k, _ := num.Of(v)
		e := match.MustEvent(match.Attr{Name: "a", Value: v})
		if got, want := ivs[0].Holds(k), f.Matches(e); got != want {
			t.Fatalf("%v at %v: interval %+v holds %v, filter %v", f, v, ivs[0], got, want)
		}
	})
}

func TestRefusals(t *testing.T) {
	for _, c := range []match.Constraint{
		{Attr: "a", Op: match.OpNe, Val: match.Int(1)},
		{Attr: "a", Op: match.OpExists},
		{Attr: "a", Op: match.OpPrefix, Val: match.Str("x")},
		{Attr: "a", Op: match.OpEq, Val: match.Str("x")},
		{Attr: "a", Op: match.OpLe, Val: match.Bool(true)},
	} {
		_, err := FromFilter("test", match.MustFilter(c))
		if !errors.Is(err, baseline.ErrUnsupported) {
			t.Errorf("%v: error %v, want ErrUnsupported", c, err)
		}
	}
}
