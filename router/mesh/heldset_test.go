package mesh

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestHeldSetAgainstMap: random additions and removals of filters (never
// below zero copies) leave a heldSet holding what a map by canonical text
// holds: counts, distinct filters, copies, the sorted listing. The hash
// is forced to collide (a few values for all filters) or not, so both the
// first entries and the colliding ones are exercised, including a
// colliding filter moving up when the first one goes.
func TestHeldSetAgainstMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := newHeldSet()
		if buckets := rapid.IntRange(0, 3).Draw(rt, "buckets"); buckets > 0 {
			s.hash = func(text string) uint64 { return uint64(len(text) % buckets) }
		}
		pool := make([]match.Filter, rapid.IntRange(1, 12).Draw(rt, "filters"))
		for i := range pool {
			pool[i] = match.MustParse(fmt.Sprintf(`k%d == "%s"`, i%3, string(rune('a'+i))))
		}
		ref := map[string]int{}
		for range rapid.IntRange(0, 200).Draw(rt, "steps") {
			f := rapid.SampledFrom(pool).Draw(rt, "filter")
			n := rapid.IntRange(-2, 3).Draw(rt, "n")
			if ref[f.String()]+n < 0 {
				n = -ref[f.String()]
			}
			if n == 0 {
				continue
			}
			s.add(f, n)
			if ref[f.String()] += n; ref[f.String()] == 0 {
				delete(ref, f.String())
			}
			checkHeldSet(rt, &s, pool, ref)
		}
	})
}

func checkHeldSet(rt *rapid.T, s *heldSet, pool []match.Filter, ref map[string]int) {
	copies := 0
	for _, n := range ref {
		copies += n
	}
	if s.copies != copies || s.distinct() != len(ref) {
		rt.Fatalf("copies %d distinct %d, want %d and %d", s.copies, s.distinct(), copies, len(ref))
	}
	for _, f := range pool {
		if got := s.count(f); got != ref[f.String()] {
			rt.Fatalf("count(%s) = %d, want %d", f, got, ref[f.String()])
		}
	}
	got := s.sorted()
	texts := make([]string, len(got))
	for i, h := range got {
		texts[i] = h.text
		if h.text != h.f.String() || h.n != ref[h.text] {
			rt.Fatalf("listed %q (filter %s) with %d copies, want %d", h.text, h.f, h.n, ref[h.text])
		}
	}
	if want := slices.Sorted(maps.Keys(ref)); !slices.Equal(texts, want) {
		rt.Fatalf("listed %q, want %q", texts, want)
	}
	for w, more := range s.more {
		if _, ok := s.first[w]; !ok || len(more) == 0 {
			rt.Fatalf("witness %d: %d colliding filters, first held %v", w, len(more), ok)
		}
	}
}
