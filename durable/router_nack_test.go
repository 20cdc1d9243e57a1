package durable

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestOutstandingNacks checks the router's index of outstanding upstream
// nacks against a brute-force walk: after any sequence of nacks and
// answers, unasked(q) equals q minus every outstanding range, an answer
// takes exactly its ticks out of the outstanding ones, and the index
// stays sorted and disjoint.
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
				// Brute force: the outstanding ticks afterwards are those
				// before less the answered ones.
				want := map[Tick]bool{}
				for _, o := range p.asked {
					for tk := o.r.From; tk <= o.r.To; tk++ {
						want[tk] = !q.Contains(tk)
					}
				}
				p.answered(q)
				got := map[Tick]bool{}
				for _, o := range p.asked {
					for tk := o.r.From; tk <= o.r.To; tk++ {
						got[tk] = true
					}
				}
				for tk, w := range want {
					if w != got[tk] {
						t.Fatalf("step %d: answered(%v): tick %d outstanding %v, want %v (asked %v)", step, q, tk, got[tk], w, p.asked)
					}
				}
				if len(got) > len(want) {
					t.Fatalf("step %d: answered(%v) added outstanding ticks: %v", step, q, p.asked)
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

// TestRouterWaitersIntervals checks the per-link waiter sets against a
// brute-force map of waited ticks: after random nacks from two links,
// knowledge spans and expiries, a span is forwarded to a link exactly when
// the link waits for one of its ticks, the answered ticks stop being
// waited for, what is due expires, and each link's waiters stay disjoint
// and sorted. Nacks for overlapping or adjacent ticks merge and wait until
// the later expiry (the model does the same).
func TestRouterWaitersIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	p := &routerPubend{waiters: map[string][]waiter{}, nextExpiry: MaxTick}
	r := &Router{}
	want := map[string]map[Tick]Tick{"a": {}, "b": {}} // link -> waited tick -> expiry
	for step := range 4000 {
		link := []string{"a", "b"}[rng.IntN(2)]
		from := Tick(1 + rng.IntN(300))
		q := Range{from, from + Tick(rng.IntN(8))}
		now := Tick(step)
		m := want[link]
		switch rng.IntN(3) {
		case 0:
			exp := now + Tick(1+rng.IntN(50))
			p.addWaiter(link, q, exp)
			// The merged run: q and every waited tick adjacent to it.
			lo, hi := q.From, q.To
			for _, ok := m[lo-1]; ok; _, ok = m[lo-1] {
				lo--
			}
			for _, ok := m[hi+1]; ok; _, ok = m[hi+1] {
				hi++
			}
			for t := lo; t <= hi; t++ {
				exp = max(exp, m[t])
			}
			for t := lo; t <= hi; t++ {
				m[t] = exp
			}
		case 1:
			hit := false
			for t := q.From; t <= q.To; t++ {
				if _, ok := m[t]; ok {
					hit = true
					delete(m, t)
				}
			}
			if got := r.takeWaiters(p, link, q); got != hit {
				t.Fatalf("step %d: take %s %v = %v, want %v", step, link, q, got, hit)
			}
		default:
			p.expireWaiters(now)
			for _, m := range want {
				for t, exp := range m {
					if exp <= now {
						delete(m, t)
					}
				}
			}
		}
		for l, m := range want {
			got := map[Tick]Tick{}
			for i, w := range p.waiters[l] {
				if i > 0 && p.waiters[l][i-1].r.To >= w.r.From {
					t.Fatalf("step %d: link %s waiters overlap or are unsorted: %v", step, l, p.waiters[l])
				}
				for t := w.r.From; t <= w.r.To; t++ {
					got[t] = w.expires
				}
			}
			if !maps.Equal(got, m) {
				t.Fatalf("step %d: link %s waits for %v, want %v", step, l, got, m)
			}
		}
	}
}
