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

// checker walks the tree and verifies its invariants.
type checker struct {
	x    *Index
	seen int
}

// check verifies the tree's invariants: every subscription in exactly
// one l-node, its home; along its path, an interval inside every bucket
// of the path's attributes, which are all different; no subscription in
// an l-node that could descend (into a p-node of its c-node, or into a
// half of its split bucket); l-nodes within their capacity, a positive
// multiple of Capacity; p-node counts exact and positive, directories
// trimmed (no split bucket with two empty halves), buckets halving their
// parent, no deeper than MaxDepth, and linked to their parent and owner.
func (x *Index) check() error {
	c := &checker{x: x}
	if x.root.bucket != nil {
		return fmt.Errorf("root c-node has a bucket")
	}
	if _, err := c.cnode(x.root, nil); err != nil {
		return err
	}
	if c.seen != len(x.subs) {
		return fmt.Errorf("%d subscriptions in l-nodes, %d stored", c.seen, len(x.subs))
	}
	return nil
}

// cnode checks n, reached along path, and returns the subscriptions
// under it.
func (c *checker) cnode(n *cnode, path []span) (int, error) {
	a := c.x.cfg.Capacity
	if n.capacity < a || n.capacity%a != 0 || len(n.leaf) > n.capacity {
		return 0, fmt.Errorf("l-node of %d with capacity %d (Capacity %d)", len(n.leaf), n.capacity, a)
	}
	for _, s := range n.leaf {
		c.seen++
		if s.home != n || c.x.subs[s.id] != s {
			return 0, fmt.Errorf("subscription %d: home or map entry wrong", s.id)
		}
		if len(s.gains) != len(s.ivs) {
			return 0, fmt.Errorf("subscription %d: %d gains for %d intervals", s.id, len(s.gains), len(s.ivs))
		}
		for _, sp := range path {
			if iv := s.interval(sp.attr); iv == nil || !sp.within(iv) {
				return 0, fmt.Errorf("subscription %d (%v) outside bucket %+v on its path", s.id, s.f, sp)
			}
		}
		for _, p := range n.pdir {
			if s.interval(p.attr) != nil {
				return 0, fmt.Errorf("subscription %d stays above p-node %q it constrains", s.id, p.attr)
			}
		}
		if b := n.bucket; b != nil && b.enclosingChild(s.interval(b.owner.attr)) != nil {
			return 0, fmt.Errorf("subscription %d stays above the half of its bucket enclosing it", s.id)
		}
	}
	total := len(n.leaf)
	for i, p := range n.pdir {
		k, err := c.pnode(n, p, path)
		if err != nil {
			return 0, err
		}
		if slices.ContainsFunc(n.pdir[:i], func(q *pnode) bool { return q.attr == p.attr }) {
			return 0, fmt.Errorf("two p-nodes on %q", p.attr)
		}
		total += k
	}
	return total, nil
}

func (c *checker) pnode(n *cnode, p *pnode, path []span) (int, error) {
	if p.parent != n || p.root.owner != p || p.root.parent != nil || p.root.depth != 0 {
		return 0, fmt.Errorf("p-node %q: links wrong", p.attr)
	}
	if slices.ContainsFunc(path, func(sp span) bool { return sp.attr == p.attr }) {
		return 0, fmt.Errorf("p-node %q under a partition on the same attribute", p.attr)
	}
	k, err := c.bucket(p.root, p, math.Inf(-1), math.Inf(1), path)
	if err != nil {
		return 0, err
	}
	if k != p.count || k == 0 {
		return 0, fmt.Errorf("p-node %q counts %d, holds %d", p.attr, p.count, k)
	}
	return k, nil
}

func (c *checker) bucket(b *cdir, p *pnode, lo, hi float64, path []span) (int, error) {
	if b.owner != p || b.node.bucket != b || b.depth > c.x.cfg.MaxDepth {
		return 0, fmt.Errorf("bucket of %q at depth %d: links or depth wrong", p.attr, b.depth)
	}
	k, err := c.cnode(b.node, append(slices.Clip(path), span{p.attr, lo, hi}))
	if err != nil || b.left == nil {
		return k, err
	}
	if b.left.parent != b || b.right.parent != b || b.left.depth != b.depth+1 || b.right.depth != b.depth+1 ||
		b.left.lo != b.lo || b.left.hi != b.mid || b.right.lo != b.mid || b.right.hi != b.hi {
		return 0, fmt.Errorf("halves of a bucket of %q: links or ranges wrong", p.attr)
	}
	kl, err := c.bucket(b.left, p, lo, b.mid, path)
	if err != nil {
		return 0, err
	}
	kr, err := c.bucket(b.right, p, b.mid, hi, path)
	if err != nil {
		return 0, err
	}
	if b.left.empty() && b.right.empty() {
		return 0, fmt.Errorf("bucket of %q keeps two empty halves", p.attr)
	}
	return k + kl + kr, nil
}

// rangeFilter draws a filter of ranges on some of a, b, c (some narrow,
// some wide, some outside the domain [0, 64)), sometimes with a
// constraint that cannot guide the descent.
func rangeFilter(t *rapid.T) match.Filter {
	var cs []match.Constraint
	for _, a := range []string{"a", "b", "c"} {
		if rapid.Bool().Draw(t, "has "+a) {
			lo := rapid.Int64Range(-8, 70).Draw(t, "lo")
			cs = append(cs, match.Constraint{Attr: a, Op: match.OpGe, Val: match.Int(lo)},
				match.Constraint{Attr: a, Op: match.OpLt, Val: match.Int(lo + rapid.Int64Range(0, 40).Draw(t, "w"))})
		}
	}
	if rapid.IntRange(0, 4).Draw(t, "string") == 0 {
		cs = append(cs, match.Constraint{Attr: "s", Op: match.OpEq, Val: match.Str("x")})
	}
	return match.MustFilter(cs...)
}

// TestInvariants drives random range subscriptions through inserts and
// deletes with small leaves and checks the tree's invariants after each
// step; deleting everything leaves the bare root.
func TestInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x, _ := New(Config{Lo: 0, Hi: 64, Capacity: rapid.IntRange(1, 4).Draw(t, "capacity"), MaxDepth: rapid.IntRange(0, 6).Draw(t, "depth")})
		var churn baselinetest.Churn
		t.Repeat(map[string]func(*rapid.T){
			"insert": func(t *rapid.T) { churn.Insert(t, x, rangeFilter(t)) },
			"delete": func(t *rapid.T) { churn.Delete(t, x) },
			"": func(t *rapid.T) {
				if err := x.check(); err != nil {
					t.Fatal(err)
				}
			},
		})
		for _, id := range churn.Live() {
			if err := x.Delete(id); err != nil {
				t.Fatal(err)
			}
		}
		if len(x.root.leaf) != 0 || len(x.root.pdir) != 0 {
			t.Fatalf("empty tree keeps %d subscriptions and %d p-nodes at the root", len(x.root.leaf), len(x.root.pdir))
		}
	})
}
