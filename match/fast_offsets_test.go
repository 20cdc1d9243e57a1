package match

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// packedLists counts the non-empty bound lists of x's segments that hold
// their keys as offsets, and all non-empty bound lists.
func packedLists(x *Fast) (packed, all int) {
	count := func(ls []boundList[float32]) {
		for i := range ls {
			if ls[i].nslots() == 0 {
				continue
			}
			all++
			if ls[i].off != nil {
				packed++
			}
		}
	}
	count64 := func(ls []boundList[float64]) {
		for i := range ls {
			if ls[i].nslots() == 0 {
				continue
			}
			all++
			if ls[i].off != nil {
				packed++
			}
		}
	}
	for _, s := range x.segs {
		for _, a := range s.attrs {
			if a.num32 != nil {
				count(a.num32.lo)
				count(a.num32.hi)
			}
			if a.num != nil {
				count64(a.num.lo)
				count64(a.num.hi)
			}
		}
	}
	return packed, all
}

// TestPackedOffsetsAgreeWithScan: integer bounds around a base (small,
// negative, near float32's 2^24 and near 2^52, where the keys are
// float64), over spans that fit 16-bit offsets in some cells and not in
// others, against events with integer values on and off the bounds,
// values between two integers, and numbers far outside (an int64 beyond
// 2^53 too); Fast built in one segment, then inserts (merged segments)
// and deletes, always equal to Scan.
func TestPackedOffsetsAgreeWithScan(t *testing.T) {
	bases := []int64{0, -70_000, -3, 1<<24 - 40_000, 1<<52 - 200_000, -(1 << 52) + 10}
	ops := []Op{OpLt, OpLe, OpGt, OpGe, OpEq, OpNe}
	sawPacked := false
	rapid.Check(t, func(t *rapid.T) {
		base := rapid.SampledFrom(bases).Draw(t, "base")
		span := rapid.SampledFrom([]int64{10, 60_000, 65_535, 65_536, 200_000}).Draw(t, "span")
		key := func(label string) int64 { return base + rapid.Int64Range(0, span).Draw(t, label) }
		filter := func() Filter {
			cs := []Constraint{{Attr: "x", Op: rapid.SampledFrom(ops).Draw(t, "op"), Val: Int(key("k"))}}
			if rapid.Bool().Draw(t, "two") {
				cs = append(cs, Constraint{Attr: "x", Op: rapid.SampledFrom(ops).Draw(t, "op2"), Val: Int(key("k2"))})
			}
			return MustFilter(cs...)
		}
		cfg := FastConfig{MaxCells: rapid.IntRange(1, 12).Draw(t, "cells"), BoundsPerCell: 2, TailSize: 8, MergeFactor: 2}
		x, ref := NewFast(cfg), NewScan()
		n := rapid.IntRange(1, 300).Draw(t, "n")
		ids := make([]ID, n)
		filters := make([]Filter, n)
		for i := range ids {
			ids[i], filters[i] = ID(i), filter()
			ref.Insert(ids[i], filters[i])
		}
		if err := x.Load(ids, filters); err != nil {
			t.Fatal(err)
		}
		if p, _ := packedLists(x); p > 0 {
			sawPacked = true
		}
		event := func() Event {
			var v Value
			switch rapid.IntRange(0, 5).Draw(t, "kind") {
			case 0, 1:
				v = Int(base + rapid.Int64Range(-3, span+3).Draw(t, "v"))
			case 2:
				v = MustFloat(float64(base+rapid.Int64Range(-3, span+3).Draw(t, "v")) + 0.5)
			case 3:
				v = MustFloat(float64(base) + float64(rapid.Int64Range(-30, 30).Draw(t, "tenths"))/10)
			case 4:
				v = Int(rapid.SampledFrom([]int64{1<<53 + 1, -(1<<53 + 1), math.MaxInt64, math.MinInt64}).Draw(t, "far"))
			default:
				v = MustFloat(rapid.SampledFrom([]float64{1e300, -1e300, 1e-300, -1e-300}).Draw(t, "farf"))
			}
			return MustEvent(Attr{Name: "x", Value: v})
		}
		check := func(stage string) {
			for range 30 {
				e := event()
				got, want := SortIDs(x.Match(e, nil)), SortIDs(ref.Match(e, nil))
				if !slices.Equal(got, want) {
					t.Fatalf("%s: event %v: fast %v, scan %v", stage, e, got, want)
				}
			}
		}
		check("loaded")
		for i := range rapid.IntRange(0, 40).Draw(t, "inserts") {
			f := filter()
			if err := x.Insert(ID(n+i), f); err != nil {
				t.Fatal(err)
			}
			ref.Insert(ID(n+i), f)
		}
		for i := 0; i < n; i += 3 {
			if err := x.Delete(ID(i)); err != nil {
				t.Fatal(err)
			}
			ref.Delete(ID(i))
		}
		x.Compact()
		check("after inserts, deletes and a compaction")
	})
	if !sawPacked {
		t.Fatal("no run built a packed list")
	}
}

// TestPackedOffsetsHEMShape: at the HEM workload's shape (integer bounds
// in [0, 10^6), 20 cells or more), every bound list is packed.
func TestPackedOffsetsHEMShape(t *testing.T) {
	x := NewFast(FastConfig{MaxCells: 20})
	ids := make([]ID, 4000)
	filters := make([]Filter, len(ids))
	for i := range ids {
		lo := int64(i*997) % 700_000
		ids[i], filters[i] = ID(i), MustFilter(
			Constraint{Attr: "a", Op: OpGe, Val: Int(lo)},
			Constraint{Attr: "a", Op: OpLe, Val: Int(lo + 300_000)})
	}
	if err := x.Load(ids, filters); err != nil {
		t.Fatal(err)
	}
	if p, all := packedLists(x); p != all || all == 0 {
		t.Fatalf("%d of %d bound lists packed", p, all)
	}
}
