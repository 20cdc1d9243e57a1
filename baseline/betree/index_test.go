package betree

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/baseline/baselinetest"
	"github.com/sift-pubsub/sift/match"
)

// TestAgreesWithScan runs the differential suite (every operator and
// type) with the default tree, and with tiny leaves and small domains
// that force many bucket splits, partitions and trims; the tree left at
// the end must keep its invariants.
func TestAgreesWithScan(t *testing.T) {
	for _, cfg := range []Config{{}, {Lo: 0, Hi: 10, Capacity: 1, MaxDepth: 4}, {Lo: -1, Hi: 3, Capacity: 2}, {Lo: 0, Hi: 8, Capacity: 3, MaxDepth: 1}} {
		t.Run(fmt.Sprintf("%+v", cfg), func(t *testing.T) {
			for seed := uint64(1); seed <= 4; seed++ {
				var x *Index
				baselinetest.Check(t, seed, 2000, baselinetest.All, func() match.Index {
					var err error
					if x, err = New(cfg); err != nil {
						t.Fatal(err)
					}
					return x
				})
				if err := x.check(); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		})
	}
}

// between is lo <= attr < hi.
func between(attr string, lo, hi int64) []match.Constraint {
	return []match.Constraint{{Attr: attr, Op: match.OpGe, Val: match.Int(lo)}, {Attr: attr, Op: match.OpLt, Val: match.Int(hi)}}
}

func insertAll(t *testing.T, x *Index, fs ...[]match.Constraint) {
	t.Helper()
	for i, cs := range fs {
		if err := x.Insert(match.ID(i+1), match.MustFilter(cs...)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPartitionsOnTheCheapestAttribute: when the root overflows, its four
// subscriptions constrain a with ranges straddling the domain's middle (a
// p-node on a spares nothing) and two constrain b narrowly; the cost
// model partitions on b, where counting subscriptions per attribute would
// pick a. Two more on b overflow b's root bucket, which splits.
func TestPartitionsOnTheCheapestAttribute(t *testing.T) {
	x, _ := New(Config{Lo: 0, Hi: 64, Capacity: 3})
	wide := between("a", 10, 50)
	insertAll(t, x, wide, wide, append(between("b", 1, 2), wide...), append(between("b", 40, 41), wide...),
		between("b", 20, 22), between("b", 50, 51))
	if len(x.root.pdir) != 1 || x.root.pdir[0].attr != "b" {
		t.Fatalf("root partitions %v, want one p-node on b", attrs(x.root.pdir))
	}
	if err := x.check(); err != nil {
		t.Fatal(err)
	}
	if got := x.root.pdir[0].root; got.left == nil {
		t.Fatal("b's clustering directory was not split")
	}
}

// TestCapacityGrows: subscriptions no directory can spare (no numeric
// range) overflow the root; with nothing to partition on, its capacity
// grows to twice its size (a multiple of Capacity), so the attempts are
// made at 5 and 13 subscriptions, not at every insertion.
func TestCapacityGrows(t *testing.T) {
	x, _ := New(Config{Capacity: 4})
	var fs [][]match.Constraint
	for range 13 {
		fs = append(fs, []match.Constraint{{Attr: "s", Op: match.OpEq, Val: match.Str("x")}})
	}
	insertAll(t, x, fs...)
	if len(x.root.pdir) != 0 || len(x.root.leaf) != 13 || x.root.capacity != 28 {
		t.Fatalf("root: %d p-nodes, %d subscriptions, capacity %d; want 0, 13, 28", len(x.root.pdir), len(x.root.leaf), x.root.capacity)
	}
}

// TestDeleteTrims: deleting the subscriptions of a partition removes its
// p-node and merges the halves they emptied.
func TestDeleteTrims(t *testing.T) {
	x, _ := New(Config{Lo: 0, Hi: 64, Capacity: 1})
	insertAll(t, x, between("a", 1, 2), between("a", 40, 41), between("b", 3, 4))
	if len(x.root.pdir) == 0 {
		t.Fatal("no partition")
	}
	for id := match.ID(1); id <= 3; id++ {
		if err := x.Delete(id); err != nil {
			t.Fatal(err)
		}
		if err := x.check(); err != nil {
			t.Fatalf("after deleting %d: %v", id, err)
		}
	}
	if len(x.root.pdir) != 0 {
		t.Fatalf("empty tree keeps p-nodes %v", attrs(x.root.pdir))
	}
}

func attrs(ps []*pnode) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.attr)
	}
	return out
}

func TestConfigRefused(t *testing.T) {
	for _, cfg := range []Config{{Lo: 5, Hi: 1}, {Capacity: -1}, {MaxDepth: 99}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestRegistered(t *testing.T) {
	if _, err := match.NewIndex("betree"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkHEM100K(b *testing.B) {
	baselinetest.BenchmarkHEM(b, 100_000, func() match.Index { x, _ := New(Config{}); return x })
}
