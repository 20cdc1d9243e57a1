package num

import (
	"math"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestCompareAgreesWithMatch checks that keys order numbers exactly as
// match.Compare does, ints above 2^53, floats and their mixes included.
func TestCompareAgreesWithMatch(t *testing.T) {
	value := rapid.Custom(func(t *rapid.T) match.Value {
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			return match.Int(rapid.Int64().Draw(t, "i"))
		case 1:
			base := rapid.SampledFrom([]int64{1 << 53, -(1 << 53), math.MaxInt64, math.MinInt64, 0}).Draw(t, "base")
			return match.Int(base + rapid.Int64Range(-600, 600).Draw(t, "d"))
		case 2:
			return match.MustFloat(rapid.Float64Range(-1e19, 1e19).Draw(t, "f"))
		}
		return match.MustFloat(float64(rapid.Int64Range(-(1<<54), 1<<54).Draw(t, "g")))
	})
	rapid.Check(t, func(t *rapid.T) {
		a, b := value.Draw(t, "a"), value.Draw(t, "b")
		ka, _ := Of(a)
		kb, _ := Of(b)
		want, _ := match.Compare(a, b)
		if got := Compare(ka, kb); got != want {
			t.Fatalf("Compare(%v, %v) = %d, match.Compare %d (keys %+v %+v)", a, b, got, want, ka, kb)
		}
		if Less(ka, kb) != (want < 0) {
			t.Fatalf("Less(%v, %v) = %v", a, b, Less(ka, kb))
		}
	})
}

func TestOfRefusesNonNumbers(t *testing.T) {
	for _, v := range []match.Value{match.Str("1"), match.Bool(true)} {
		if _, ok := Of(v); ok {
			t.Errorf("Of(%v) ok", v)
		}
	}
}
