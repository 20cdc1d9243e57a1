package betree

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/baseline/baselinetest"
	"github.com/sift-pubsub/sift/baseline/internal/interval"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// span is the range of values a bucket holds, edges unbounded.
type span struct {
	attr   string
	lo, hi float64 // -Inf or +Inf at the edges; hi exclusive
}

// within reports whether the interval lies inside the span.
func (sp span) within(iv *interval.Interval) bool {
	lo := math.IsInf(sp.lo, -1) || !num.Less(iv.Lo, num.Key{F: sp.lo})
	hi := math.IsInf(sp.hi, 1) || num.Less(iv.Hi, num.Key{F: sp.hi}) || iv.Hi == (num.Key{F: sp.hi}) && iv.HiOpen
	return lo && hi
}

// check verifies that every subscription sits in exactly one l-node, the
// one it names as home, and that its interval on the attribute of every
// bucket on the path from the root lies inside that bucket.
func (x *Index) check() error {
	seen := 0
	var walk func(n *cnode, path []span) error
	walk = func(n *cnode, path []span) error {
		for _, s := range n.leaf {
			seen++
			if s.home != n || x.subs[s.id] != s {
				return fmt.Errorf("subscription %d: home or map entry wrong", s.id)
			}
			for _, sp := range path {
				iv := s.interval(sp.attr)
				if iv == nil || !sp.within(iv) {
					return fmt.Errorf("subscription %d (%v) outside bucket %+v on its path", s.id, s.f, sp)
				}
			}
		}
		for _, b := range n.parts {
			if err := walkBucket(b, math.Inf(-1), math.Inf(1), path, walk); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(x.root, nil); err != nil {
		return err
	}
	if seen != len(x.subs) {
		return fmt.Errorf("%d subscriptions in l-nodes, %d stored", seen, len(x.subs))
	}
	return nil
}

func walkBucket(b *bucket, lo, hi float64, path []span, walk func(*cnode, []span) error) error {
	if err := walk(b.node, append(slices.Clip(path), span{b.attr, lo, hi})); err != nil {
		return err
	}
	if b.left == nil {
		return nil
	}
	if err := walkBucket(b.left, lo, b.mid, path, walk); err != nil {
		return err
	}
	return walkBucket(b.right, b.mid, hi, path, walk)
}

// TestInvariants drives random range subscriptions through inserts and
// deletes with small leaves and checks the placement invariants.
func TestInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x, _ := New(Config{Lo: 0, Hi: 64, Capacity: rapid.IntRange(1, 4).Draw(t, "capacity"), MaxDepth: rapid.IntRange(0, 6).Draw(t, "depth")})
		var churn baselinetest.Churn
		t.Repeat(map[string]func(*rapid.T){
			"insert": func(t *rapid.T) {
				var cs []match.Constraint
				for _, a := range []string{"a", "b", "c"} {
					if rapid.Bool().Draw(t, "has "+a) {
						lo := rapid.Int64Range(-8, 70).Draw(t, "lo")
						cs = append(cs, match.Constraint{Attr: a, Op: match.OpGe, Val: match.Int(lo)},
							match.Constraint{Attr: a, Op: match.OpLt, Val: match.Int(lo + rapid.Int64Range(0, 40).Draw(t, "w"))})
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
