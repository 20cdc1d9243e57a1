package match_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestFastPopularPointsAgreeWithScan checks the Fast index where a few
// `==` values are wanted by most subscriptions (topics, stock symbols):
// values with more points than a segment has bitset words take the
// precomputed-mask path of point matching, rarer ones the per-point path.
// Events carry popular, rare and absent values, values of another type
// and no value at all; subscriptions are deleted and the index compacted
// between rounds.
func TestFastPopularPointsAgreeWithScan(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 99))
			syms := []string{"AAPL", "MSFT", "IBM", "rare1", "rare2", "rare3"}
			sym := func() string {
				if r.IntN(10) < 8 {
					return syms[r.IntN(3)] // popular
				}
				return syms[3+r.IntN(3)]
			}
			filter := func() match.Filter {
				switch r.IntN(6) {
				case 0:
					return match.MustParse(fmt.Sprintf(`level == %d`, r.IntN(4))) // numeric points
				case 1:
					return match.MustParse(fmt.Sprintf(`price > %d`, r.IntN(100)))
				}
				text := fmt.Sprintf(`sym == %q`, sym())
				if r.IntN(2) == 0 {
					text += fmt.Sprintf(` && price >= %d && price < %d`, r.IntN(50), 50+r.IntN(50))
				}
				return match.MustParse(text)
			}
			event := func() match.Event {
				var attrs []match.Attr
				switch r.IntN(8) {
				case 0: // no sym
				case 1:
					attrs = append(attrs, match.Attr{Name: "sym", Value: match.Int(3)})
				case 2:
					attrs = append(attrs, match.Attr{Name: "sym", Value: match.Str("absent")})
				default:
					attrs = append(attrs, match.Attr{Name: "sym", Value: match.Str(sym())})
				}
				attrs = append(attrs,
					match.Attr{Name: "price", Value: match.Int(int64(r.IntN(110)))},
					match.Attr{Name: "level", Value: match.MustFloat(float64(r.IntN(5)) / 2)})
				return match.MustEvent(attrs...)
			}
			idx, ref := match.NewFast(match.FastConfig{TailSize: 64}), match.NewScan()
			var live []match.ID
			for id := range match.ID(3000) {
				f := filter()
				if err := idx.Insert(id, f); err != nil {
					t.Fatal(err)
				}
				ref.Insert(id, f)
				live = append(live, id)
			}
			for round := range 3 {
				if round > 0 {
					for range len(live) / 3 {
						i := r.IntN(len(live))
						if err := idx.Delete(live[i]); err != nil {
							t.Fatal(err)
						}
						ref.Delete(live[i])
						live = slices.Delete(live, i, i+1)
					}
				}
				if round == 2 {
					idx.Compact()
				}
				for range 500 {
					e := event()
					got := match.SortIDs(idx.Match(e, nil))
					want := match.SortIDs(ref.Match(e, nil))
					if !slices.Equal(got, want) {
						t.Fatalf("round %d: event %v: fast found %d matches, scan %d", round, e, len(got), len(want))
					}
				}
			}
		})
	}
}
