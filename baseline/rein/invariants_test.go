package rein

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/baseline/baselinetest"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// check verifies the index's internal invariants: each live interval's
// bounded ends sit in the bucket of their value, buckets hold nothing
// else, settled buckets are sorted, and each attribute's bitset is the set
// of live subscriptions constraining it.
func (x *Index) check() error {
	want := map[string]int{}
	for _, a := range x.attrs {
		for _, bs := range [][]bucket{a.lows, a.highs} {
			for i := range bs {
				if !bs[i].dirty && !slices.IsSortedFunc(bs[i].keys, num.Compare) {
					return fmt.Errorf("%s: settled bucket %d unsorted", a.name, i)
				}
				want[a.name] += len(bs[i].slots)
			}
		}
	}
	for s := range x.ivs {
		live := x.live[s/64]&(1<<(s%64)) != 0
		if live != x.slots.Live(uint32(s)) {
			return fmt.Errorf("slot %d: live bit %v", s, live)
		}
		for _, iv := range x.ivs[s] {
			a := x.attrs[iv.Attr]
			if a == nil || a.has[s/64]&(1<<(s%64)) == 0 {
				return fmt.Errorf("slot %d: attribute %s missing or bit clear", s, iv.Attr)
			}
			if iv.LoBounded() {
				if !slices.Contains(a.lows[x.bucketOf(iv.Lo)].slots, uint32(s)) {
					return fmt.Errorf("slot %d: low end %v not in its bucket", s, iv.Lo)
				}
				want[iv.Attr]--
			}
			if iv.HiBounded() {
				if !slices.Contains(a.highs[x.bucketOf(iv.Hi)].slots, uint32(s)) {
					return fmt.Errorf("slot %d: high end %v not in its bucket", s, iv.Hi)
				}
				want[iv.Attr]--
			}
		}
	}
	for name, n := range want {
		if n != 0 {
			return fmt.Errorf("%s: %d stray ends in buckets", name, n)
		}
	}
	return nil
}

// TestInvariants drives random HEM-like range subscriptions through
// inserts, deletes and matches and checks the invariants after each step.
func TestInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x, _ := New(Config{Lo: 0, Hi: 100, Buckets: rapid.IntRange(1, 12).Draw(t, "buckets")})
		var churn baselinetest.Churn
		t.Repeat(map[string]func(*rapid.T){
			"insert": func(t *rapid.T) {
				var cs []match.Constraint
				for _, a := range []string{"a", "b"} {
					if rapid.Bool().Draw(t, "has "+a) {
						lo := rapid.Int64Range(-20, 120).Draw(t, "lo")
						cs = append(cs, match.Constraint{Attr: a, Op: match.OpGe, Val: match.Int(lo)},
							match.Constraint{Attr: a, Op: match.OpLt, Val: match.Int(lo + rapid.Int64Range(0, 50).Draw(t, "w"))})
					}
				}
				churn.Insert(t, x, match.MustFilter(cs...))
			},
			"delete": func(t *rapid.T) { churn.Delete(t, x) },
			"match": func(t *rapid.T) {
				v := rapid.Int64Range(-10, 110).Draw(t, "v")
				x.Match(match.MustEvent(match.Attr{Name: "a", Value: match.Int(v)}, match.Attr{Name: "b", Value: match.Int(v / 2)}), nil)
			},
			"": func(t *rapid.T) {
				if err := x.check(); err != nil {
					t.Fatal(err)
				}
			},
		})
	})
}
