package match

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFastPivotAgreesWithScan checks segments that have a pivot (most
// subscriptions want one value of a string attribute, as stock symbols)
// against brute force. The subscriptions mix points on the pivot with
// prefix intervals that contain some point values, `!=` and suffix
// constraints on it, other-typed constraints on it, and numeric bounds
// that float32 and float64 cannot all hold exactly; events carry point
// values (inside and outside the intervals), values no subscription names,
// other types and no value, and numbers beyond 2^53. Deletes, online
// inserts and compaction rebuild pivoted segments from their indexed form.
func TestFastPivotAgreesWithScan(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 7))
			g := pivotGen{intn: r.IntN}
			idx, ref := NewFast(FastConfig{TailSize: 40 + r.IntN(200), MergeFactor: 2 + r.IntN(3)}), NewScan()
			next := ID(0)
			var live []ID
			insert := func(n int) {
				for range n {
					f := g.filter()
					if err := idx.Insert(next, f); err != nil {
						t.Fatal(err)
					}
					ref.Insert(next, f)
					live = append(live, next)
					next++
				}
			}
			check := func(what string) {
				for range 300 {
					e := g.event()
					got := SortIDs(idx.Match(e, nil))
					want := SortIDs(ref.Match(e, nil))
					if !slices.Equal(got, want) {
						t.Fatalf("%s: event %v: fast %v, scan %v", what, e, got, want)
					}
				}
			}
			insert(2000)
			idx.Compact()
			if !hasPivot(idx) {
				t.Fatalf("the compacted segment has no pivot")
			}
			check("compacted")
			for round := range 3 {
				for range len(live) / 4 {
					i := r.IntN(len(live))
					if err := idx.Delete(live[i]); err != nil {
						t.Fatal(err)
					}
					ref.Delete(live[i])
					live = slices.Delete(live, i, i+1)
				}
				insert(500)
				check(fmt.Sprint("round ", round))
			}
			idx.Compact()
			check("compacted again")
		})
	}
}

// hasPivot reports whether some segment of x has a pivot.
func hasPivot(x *Fast) bool {
	for _, s := range x.segs {
		if s.pivot >= 0 {
			return true
		}
	}
	return false
}

// pivotGen draws the subscriptions and events of TestFastPivotAgreesWithScan
// and FuzzFastPivot from intn, which returns a number in [0, n).
type pivotGen struct{ intn func(n int) int }

var pivotSyms = []string{"AB", "ABC", "ABD", "AC", "B", "BA", "BAB", "C", "CAT", "", "AB\x00", "ZZ"}

func (g pivotGen) sym() string { return pivotSyms[g.intn(len(pivotSyms))] }

// number returns a numeric value: small ints, floats (some float32-exact),
// and ints beyond 2^53 that no float64 holds exactly.
func (g pivotGen) number() Value {
	switch g.intn(4) {
	case 0:
		return Int(int64(g.intn(20)))
	case 1:
		return MustFloat(float64(g.intn(40)) / 2) // float32-exact
	case 2:
		return MustFloat(float64(g.intn(2000)) / 100) // cents
	}
	return Int(1<<53 + int64(g.intn(5)) - 2)
}

func (g pivotGen) filter() Filter {
	var cs []Constraint
	add := func(attr string, op Op, v Value) { cs = append(cs, Constraint{Attr: attr, Op: op, Val: v}) }
	switch k := g.intn(20); {
	case k < 13:
		add("sym", OpEq, Str(g.sym()))
	case k < 15:
		s := g.sym()
		add("sym", OpPrefix, Str(s[:g.intn(len(s)+1)]))
		if g.intn(2) == 0 {
			add("sym", OpNe, Str(g.sym()))
		}
	case k < 16:
		add("sym", []Op{OpLt, OpLe, OpGt, OpGe}[g.intn(4)], Str(g.sym()))
	case k < 17:
		add("sym", OpSuffix, Str(g.sym()))
	case k < 18:
		add("sym", OpEq, Int(int64(g.intn(3)))) // another type on the pivot
	case k < 19:
		add("sym", OpExists, Value{})
	}
	switch g.intn(4) {
	case 0:
		add("px", []Op{OpLt, OpLe, OpGt, OpGe}[g.intn(4)], g.number())
	case 1:
		add("px", OpGe, g.number())
		add("px", OpLe, g.number())
	case 2:
		add("px", OpEq, g.number())
	}
	if g.intn(5) == 0 {
		add("venue", OpNe, Str(g.sym()))
	}
	if len(cs) == 0 {
		add("px", OpExists, Value{})
	}
	f, err := NewFilter(cs...)
	if err != nil {
		panic(err)
	}
	return f
}

func (g pivotGen) event() Event {
	var attrs []Attr
	switch k := g.intn(10); {
	case k < 6:
		attrs = append(attrs, Attr{Name: "sym", Value: Str(g.sym())})
	case k < 7:
		attrs = append(attrs, Attr{Name: "sym", Value: Str(g.sym() + "x")}) // inside prefixes, no point
	case k < 8:
		attrs = append(attrs, Attr{Name: "sym", Value: Int(int64(g.intn(3)))})
	case k < 9:
		attrs = append(attrs, Attr{Name: "sym", Value: Bool(true)})
	}
	if g.intn(6) > 0 {
		attrs = append(attrs, Attr{Name: "px", Value: g.number()})
	}
	if g.intn(2) == 0 {
		attrs = append(attrs, Attr{Name: "venue", Value: Str(g.sym())})
	}
	return MustEvent(attrs...)
}
