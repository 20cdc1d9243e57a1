package core

import (
	"testing"

	"pgregory.net/rapid"
)

// TestSlotIndexAgreesWithMap: random puts and removes of pool slots, whose
// hashes are drawn from a few values (so that probe runs meet, wrap around
// the table and are cut by removals), leave the index answering every
// hash as a map from hash to slot does, through growth from empty.
func TestSlotIndexAgreesWithMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		x := newSlotIndex()
		slots := make([]pooledFilter, 1) // slot 0 is never used
		want := map[uint64]uint32{}
		hashes := rapid.IntRange(1, 64).Draw(rt, "hashes")
		for range rapid.IntRange(1, 300).Draw(rt, "steps") {
			k := uint64(rapid.IntRange(1, hashes).Draw(rt, "hash"))
			if s, ok := want[k]; ok {
				x.remove(s, slots)
				delete(want, k)
			} else {
				slots = append(slots, pooledFilter{hash: k})
				s := uint32(len(slots) - 1)
				x.put(s, slots)
				want[k] = s
			}
			if x.len() != len(want) {
				rt.Fatalf("the index holds %d slots, want %d", x.len(), len(want))
			}
			for k := range uint64(hashes + 1) {
				got, ok := x.get(k, slots)
				if w, in := want[k]; ok != in || got != w {
					rt.Fatalf("get(%d) = %d, %v; want %d, %v", k, got, ok, w, in)
				}
			}
		}
	})
}
