package durable

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestOutstandingNacks checks the router's index of outstanding upstream
// nacks against a brute-force walk: after any sequence of nacks and
// answers, unasked(q) equals q minus every outstanding range, and the
// index stays sorted and disjoint.
func TestOutstandingNacks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := &routerPubend{}
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			from := Tick(rapid.IntRange(1, 80).Draw(t, "from"))
			q := Range{from, from + Tick(rapid.IntRange(0, 10).Draw(t, "len"))}
			got := p.unasked(q)
			want := []Range{q}
			for _, o := range p.asked {
				var next []Range
				for _, x := range want {
					next = append(next, subtract(x, o.r)...)
				}
				want = next
			}
			if !slices.Equal(sortedRanges(got), sortedRanges(want)) {
				t.Fatalf("step %d: unasked(%v) = %v, brute force %v (asked %v)", step, q, got, want, p.asked)
			}
			if rapid.Bool().Draw(t, "answer") {
				before := slices.Clone(p.asked)
				p.answered(q)
				for _, o := range before {
					covered := q.From <= o.r.From && o.r.To <= q.To
					if kept := slices.Contains(p.asked, o); kept == covered {
						t.Fatalf("step %d: answered(%v) kept=%v for %v", step, q, kept, o.r)
					}
				}
			} else {
				for _, r := range got {
					p.addAsked(outstanding{r: r})
				}
			}
			for i := 1; i < len(p.asked); i++ {
				if p.asked[i-1].r.To >= p.asked[i].r.From {
					t.Fatalf("step %d: asked not sorted and disjoint: %v", step, p.asked)
				}
			}
		}
	})
}

func sortedRanges(rs []Range) []Range {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b Range) int { return int(a.From) - int(b.From) })
	return out
}
