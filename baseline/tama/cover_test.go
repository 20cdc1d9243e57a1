package tama

import (
	"testing"

	"github.com/sift-pubsub/sift/baseline/internal/interval"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestCoverIsExact checks the decomposition of intervals into cells: for
// every value, at most one fully covered cell contains it, only if the
// interval holds there, and when the interval holds and no full cell
// contains the value, its last-level cell is a partial one.
func TestCoverIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x, _ := New(Config{Lo: 0, Hi: 16, Levels: rapid.IntRange(1, 6).Draw(t, "levels")})
		key := func(name string) num.Key {
			k, _ := num.Of(match.MustFloat(float64(rapid.IntRange(-8, 40).Draw(t, name)) / 2))
			return k
		}
		iv := interval.Interval{Attr: "a", Lo: key("lo"), Hi: key("hi"),
			LoOpen: rapid.Bool().Draw(t, "loOpen"), HiOpen: rapid.Bool().Draw(t, "hiOpen")}
		if rapid.IntRange(0, 4).Draw(t, "unboundedLo") == 0 {
			iv.Lo, iv.LoOpen = num.NegInf, false
		}
		if rapid.IntRange(0, 4).Draw(t, "unboundedHi") == 0 {
			iv.Hi, iv.HiOpen = num.Inf, false
		}
		full := map[int]bool{}
		partial := map[int]bool{}
		x.cover(&iv, func(node int) { full[node] = true }, func(leaf int) { partial[leaf] = true })
		if len(partial) > 2 {
			t.Fatalf("%d partial leaves", len(partial))
		}
		for v := -10; v <= 42; v++ {
			k, _ := num.Of(match.MustFloat(float64(v) / 2))
			leaf := x.leafOf(k)
			covering := 0
			for node := leaf + x.leaves; node > 0; node >>= 1 {
				if full[node] {
					covering++
				}
			}
			holds := iv.Holds(k)
			switch {
			case covering > 1:
				t.Fatalf("value %v in %d full cells of %+v", k, covering, iv)
			case covering == 1 && !holds:
				t.Fatalf("value %v in a full cell of %+v it fails", k, iv)
			case covering == 1 && partial[leaf]:
				t.Fatalf("leaf %d both full and partial for %+v", leaf, iv)
			case holds && covering == 0 && !partial[leaf]:
				t.Fatalf("value %v holds for %+v but its leaf %d is neither full nor partial", k, iv, leaf)
			}
		}
	})
}
