package poset

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

var fixedFilters = []match.Filter{
	match.MustParse("a >= 0"), match.MustParse("a >= 3"), match.MustParse("b exists"),
	match.MustParse("s prefix \"x\""), match.MustParse("a >= 3 && b <= 4"),
}

// TestFFRandomOps inserts through FF with honest, lying (under Verify) and
// silent clients, mixed with deletes, and checks Match against Scan after
// every step; the forest keeps its full invariants.
func TestFFRandomOps(t *testing.T) {
	events := allEvents()
	for _, st := range structures {
		for _, style := range []string{"honest", "random", "silent"} {
			t.Run(st.name+"/"+style, func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) {
					rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 2))
					c := st.make(Config{})
					if err := c.Pin(fixedFilters); err != nil {
						t.Fatal(err)
					}
					scan := match.NewScan()
					from := map[match.ID]Iface{}
					var live []match.ID
					for id := range match.ID(rapid.IntRange(1, 25).Draw(t, "steps")) {
						if len(live) > 0 && rapid.IntRange(0, 3).Draw(t, "op") == 0 {
							i := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
							c.Delete(live[i])
							scan.Delete(live[i])
							live = slices.Delete(live, i, i+1)
						} else {
							f := genFilter().Draw(t, "f")
							claim := FixedCovering(c.Fixed(), f)
							switch style {
							case "random":
								for j := range len(c.fixed) {
									if rng.IntN(2) == 0 {
										claim[j/64] ^= 1 << (j % 64)
									}
								}
							case "silent":
								claim = NewBits(len(c.fixed))
							}
							if _, err := c.AddFF(id, 1, f, []Bits{claim}, Verify); err != nil {
								t.Fatal(err)
							}
							scan.Insert(id, f)
							from[id] = 1
							live = append(live, id)
						}
						if err := checkCommon(c); err != nil {
							t.Fatalf("%v\n%s", err, c)
						}
						if st.name == "forest" {
							if err := checkForest(&Forest{c}); err != nil {
								t.Fatalf("%v\n%s", err, c)
							}
						}
						if err := checkMatch(c, scan, from, events); err != nil {
							t.Fatalf("%v\n%s", err, c)
						}
					}
					for _, id := range live {
						c.Delete(id)
					}
					if c.Nodes() < 1 || c.Len() != 0 {
						t.Fatalf("after deleting everything: %d nodes, %d subscriptions", c.Nodes(), c.Len())
					}
				})
			})
		}
	}
}

func TestFFStartsLower(t *testing.T) {
	f := NewForest(Config{Classic: true})
	if err := f.Pin([]match.Filter{match.MustParse("a > 0"), match.MustParse("b > 0")}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		f.Add(match.ID(i), 0, match.MustFilter(match.Constraint{Attr: "c", Op: match.OpEq, Val: match.Int(int64(i))}))
	}
	target := match.MustParse("a > 1 && b > 1")
	f.ResetCounters()
	st, err := f.AddFF(100, 0, target, []Bits{FixedCovering(f.Fixed(), target)}, Verify)
	if err != nil || st.Claimed != 2 || st.Fallback {
		t.Fatalf("AddFF: %+v %v", st, err)
	}
	if tests := f.Counters().InsertTests; tests > 3 {
		t.Errorf("FF insert did %d covering tests; starting below a fixed filter should need at most 3", tests)
	}
	if _, err := f.AddFF(101, 0, target, []Bits{NewBits(7 * 64)}, Verify); err == nil {
		t.Error("claim of the wrong length accepted")
	}
	if err := f.Pin([]match.Filter{match.MustParse("a > 1 && a < 0")}); err == nil {
		t.Error("unsatisfiable fixed filter accepted")
	}
}
