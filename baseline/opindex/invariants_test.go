package opindex

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/baseline/baselinetest"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// check verifies that every live subscription sits in the partition of
// its pivot, which is one of its attributes, that partition sizes count
// them, that the attribute counts are those of the live filters, and
// that each group's lists are consistent (a wide key only for a constant
// no float64 equals, predicate counts as recorded).
func (x *Index) check() error {
	sizes := map[string]int{}
	freq := map[string]int{}
	for s := range x.filters {
		if !x.slots.Live(uint32(s)) {
			continue
		}
		f := x.filters[s]
		for _, a := range f.Attrs() {
			freq[a]++
		}
		if f.Len() == 0 {
			if !slices.Contains(x.always, uint32(s)) {
				return fmt.Errorf("slot %d: empty filter not in always", s)
			}
			continue
		}
		if !slices.Contains(f.Attrs(), x.pivot[s]) || x.parts[x.pivot[s]] == nil {
			return fmt.Errorf("slot %d: pivot %q not an attribute of %v or no partition", s, x.pivot[s], f)
		}
		sizes[x.pivot[s]]++
	}
	for name, p := range x.parts {
		if p.n != sizes[name] {
			return fmt.Errorf("partition %s: size %d, want %d", name, p.n, sizes[name])
		}
		for attr, g := range p.attrs {
			n := len(g.others)
			for op, l := range g.nums {
				if len(l.vals) != len(l.slots) || len(l.wide) != len(l.wideSlots) {
					return fmt.Errorf("partition %s, %s, op %d: %d values for %d slots, %d wide for %d", name, attr, op, len(l.vals), len(l.slots), len(l.wide), len(l.wideSlots))
				}
				for _, k := range l.wide {
					if k.R == 0 {
						return fmt.Errorf("partition %s, %s, op %d: wide key %+v is a float64", name, attr, op, k)
					}
				}
				n += len(l.vals) + len(l.wide)
			}
			if n != g.n || n == 0 {
				return fmt.Errorf("partition %s, %s: %d predicates, count %d", name, attr, n, g.n)
			}
		}
	}
	if fmt.Sprint(freq) != fmt.Sprint(x.freq) {
		return fmt.Errorf("attribute counts %v, want %v", x.freq, freq)
	}
	return nil
}

func TestInvariants(t *testing.T) {
	attrs := []string{"a", "b", "c"}
	rapid.Check(t, func(t *rapid.T) {
		x := New()
		var churn baselinetest.Churn
		t.Repeat(map[string]func(*rapid.T){
			"insert": func(t *rapid.T) {
				var cs []match.Constraint
				for _, a := range attrs {
					if rapid.Bool().Draw(t, "has "+a) {
						v := rapid.Int64Range(0, 9).Draw(t, "v")
						if rapid.Bool().Draw(t, "wide") {
							v += 1<<60 + 1 // no float64 equals it
						}
						cs = append(cs, match.Constraint{Attr: a, Op: match.OpGe, Val: match.Int(v)})
					}
				}
				churn.Insert(t, x, match.MustFilter(cs...))
			},
			"delete": func(t *rapid.T) { churn.Delete(t, x) },
			"": func(t *rapid.T) {
				if err := x.check(); err != nil {
					t.Fatal(err)
				}
			},
		})
	})
}
