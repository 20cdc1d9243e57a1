package match

import (
	"slices"
	"testing"
)

// TestSlots24RoundTrip packs slots across the 3-byte range (0, the top
// slot 2^23-1, open and closed, byte boundaries) and reads each back, and
// marks every cut of the list against the same marks made from the
// 4-byte slots.
func TestSlots24RoundTrip(t *testing.T) {
	top := uint32(slotMask24)
	slots := []uint32{0, 1 | openBit, 255, 256 | openBit, 65535, 65536 | openBit, top, top | openBit, 1 << 22, 12345 | openBit}
	wide := boundList[float32]{slots: slices.Clone(slots)}
	ls := []boundList[float32]{{slots: slices.Clone(slots)}}
	packSlots(int(top)+1, ls)
	b := &ls[0]
	if b.s24 == nil || b.slots != nil {
		t.Fatal("a segment of 2^23 slots did not get 3-byte slots")
	}
	if b.nslots() != len(slots) {
		t.Fatalf("nslots %d, want %d", b.nslots(), len(slots))
	}
	for i, s := range slots {
		if got := b.slot(i); got != s {
			t.Errorf("slot %d: got %#x, want %#x", i, got, s)
		}
	}
	words := (int(top) + 64) / 64
	for below := range int32(len(slots) + 1) {
		for upTo := below; upTo <= int32(len(slots)); upTo++ {
			at := boundCut{below, upTo}
			for _, side := range []string{"below", "above"} {
				got, want := make([]uint64, words), make([]uint64, words)
				if side == "below" {
					b.failBelow(at, got)
					wide.failBelow(at, want)
				} else {
					b.failAbove(at, got)
					wide.failAbove(at, want)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("fail%s %+v: 3-byte marks differ from 4-byte ones", side, at)
				}
			}
		}
	}
	big := []boundList[float32]{{slots: slices.Clone(slots)}}
	packSlots(int(top)+2, big)
	if big[0].s24 != nil {
		t.Fatal("a segment beyond 2^23 slots got 3-byte slots")
	}
}

// TestSlotWidthsAgreeWithScan runs the generator's filters (every
// operator and type, strict and closed bounds) through Fast with 3-byte
// slots (NarrowSlots), with 4-byte ones where NarrowSlots would not fit
// them (slots24Limit 0: the form of segments beyond 2^23 subscriptions),
// and with the default 4-byte ones, through inserts, deletes, merges
// and a compaction, against Scan.
func TestSlotWidthsAgreeWithScan(t *testing.T) {
	defer func(l int) { slots24Limit = l }(slots24Limit)
	for _, c := range []struct {
		narrow bool
		limit  int
	}{{true, 1 << 23}, {true, 0}, {false, 1 << 23}} {
		slots24Limit = c.limit
		limit := c.limit
		if !c.narrow {
			limit = 0 // 4-byte slots expected
		}
		for seed := uint64(1); seed <= 3; seed++ {
			g := newGen(seed)
			x, ref := NewFast(FastConfig{MaxCells: 8, BoundsPerCell: 2, TailSize: 16, MergeFactor: 2, NarrowSlots: c.narrow}), NewScan()
			for i := range 1200 {
				f := g.filter()
				if err := x.Insert(ID(i), f); err != nil {
					t.Fatal(err)
				}
				ref.Insert(ID(i), f)
			}
			for i := 0; i < 1200; i += 4 {
				x.Delete(ID(i))
				ref.Delete(ID(i))
			}
			for stage, compact := range []bool{false, true} {
				if compact {
					x.Compact()
				}
				narrow, wide := slotForms(x)
				if limit == 0 && narrow > 0 || limit > 0 && wide > 0 || narrow+wide == 0 {
					t.Fatalf("limit %d: %d lists of 3-byte slots, %d of 4-byte", limit, narrow, wide)
				}
				for range 300 {
					e := g.event()
					got, want := SortIDs(x.Match(e, nil)), SortIDs(ref.Match(e, nil))
					if !slices.Equal(got, want) {
						t.Fatalf("limit %d seed %d stage %d: event %v: fast %v, scan %v", limit, seed, stage, e, got, want)
					}
				}
			}
		}
	}
}

// slotForms counts the non-empty bound lists of x's segments by the width
// of their slots.
func slotForms(x *Fast) (narrow, wide int) {
	count := func(n, w bool) {
		if n {
			narrow++
		}
		if w {
			wide++
		}
	}
	for _, s := range x.segs {
		for _, a := range s.attrs {
			if a.num32 != nil {
				for _, ls := range [][]boundList[float32]{a.num32.lo, a.num32.hi} {
					for i := range ls {
						count(ls[i].s24 != nil, ls[i].slots != nil)
					}
				}
			}
			if a.num != nil {
				for _, ls := range [][]boundList[float64]{a.num.lo, a.num.hi} {
					for i := range ls {
						count(ls[i].s24 != nil, ls[i].slots != nil)
					}
				}
			}
			if a.str != nil {
				for _, ls := range [][]boundList[string]{a.str.lo, a.str.hi} {
					for i := range ls {
						count(ls[i].s24 != nil, ls[i].slots != nil)
					}
				}
			}
		}
	}
	return narrow, wide
}
