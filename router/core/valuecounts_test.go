package core

import (
	"testing"

	"pgregory.net/rapid"
)

// TestValueCountsAgreeWithMap: random additions and removals of counts,
// on hashes drawn from a few values (so that probe runs meet, wrap around
// the table and are cut by removals) or from all 32 bits, leave the table
// answering every hash as a map from hash to count does, through growth
// from empty and back to empty, with the counts before and after each
// change as the map has them.
func TestValueCountsAgreeWithMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var x valueCounts
		want := map[uint32]int{}
		few := rapid.IntRange(1, 64).Draw(rt, "hashes")
		wide := rapid.Bool().Draw(rt, "wide")
		var seen []uint32
		for range rapid.IntRange(1, 300).Draw(rt, "steps") {
			h := uint32(rapid.IntRange(1, few).Draw(rt, "hash"))
			if wide {
				h = rapid.Uint32().Draw(rt, "wide hash")
			}
			if len(want) > 0 && rapid.IntRange(0, 2).Draw(rt, "remove") == 0 {
				h = rapid.SampledFrom(seen).Draw(rt, "held")
			}
			delta := rapid.IntRange(1, 3).Draw(rt, "delta")
			if w := want[h]; w > 0 && rapid.Bool().Draw(rt, "down") {
				delta = -rapid.IntRange(1, w).Draw(rt, "down by")
			}
			before, after := x.add(h, delta)
			if before != want[h] || after != want[h]+delta {
				rt.Fatalf("add(%d, %d) = %d, %d; want %d, %d", h, delta, before, after, want[h], want[h]+delta)
			}
			if want[h] += delta; want[h] == 0 {
				delete(want, h)
			}
			seen = seen[:0]
			for k := range want {
				seen = append(seen, k)
			}
			checkValueCounts(rt, &x, want, few)
		}
	})
}

// checkValueCounts checks x against the model: its length, what it
// lists, every hash of 0..few and every hash the model holds.
func checkValueCounts(rt *rapid.T, x *valueCounts, want map[uint32]int, few int) {
	if x.len() != len(want) {
		rt.Fatalf("the table holds %d hashes, want %d", x.len(), len(want))
	}
	if len(want) == 0 && x.words != nil {
		rt.Fatalf("an empty table keeps %d words", len(x.words))
	}
	listed := map[uint32]bool{}
	x.each(func(h uint32) { listed[h] = true })
	for h, w := range want {
		if !listed[h] || x.get(h) != w {
			rt.Fatalf("hash %d: listed %v, count %d; want listed, %d", h, listed[h], x.get(h), w)
		}
	}
	if len(listed) != len(want) {
		rt.Fatalf("the table lists %d hashes, want %d", len(listed), len(want))
	}
	for h := range uint32(few + 1) {
		if x.get(h) != want[h] {
			rt.Fatalf("get(%d) = %d, want %d", h, x.get(h), want[h])
		}
	}
}
