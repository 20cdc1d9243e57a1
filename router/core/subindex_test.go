package core

import (
	"maps"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestSubIndexAgainstMap: random puts and deletes of ids drawn dense,
// with small and large gaps, or anywhere, leave a subIndex equal to a
// map after every step (Get of held and unheld ids, Len, All in id
// order), and its memory proportional to what it holds: entries in runs
// (holes included) stay within a bound of the live ones.
func TestSubIndexAgainstMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, ref := newSubIndex(), map[uint64]match.ID{}
		next, x := uint64(rapid.Uint64Range(0, 1<<40).Draw(t, "start")), match.ID(0)
		for range rapid.IntRange(1, 400).Draw(t, "steps") {
			var sub uint64
			switch rapid.IntRange(0, 5).Draw(t, "how") {
			case 0, 1: // the next id
				sub = next
			case 2: // a small or large gap
				sub = next + rapid.Uint64Range(1, 20).Draw(t, "gap")
			case 3: // an id held or once held
				sub = next - rapid.Uint64Range(0, 50).Draw(t, "back")
			case 4: // anywhere
				sub = rapid.Uint64().Draw(t, "any")
			case 5:
				sub = rapid.SampledFrom(append(slices.Collect(maps.Keys(ref)), next)).Draw(t, "held")
			}
			next = max(next, sub+1)
			if _, held := ref[sub]; held || rapid.Bool().Draw(t, "delete") {
				gx, gok := s.Delete(sub)
				wx, wok := ref[sub]
				if gx != wx || gok != wok {
					t.Fatalf("Delete(%d) = %d %v, want %d %v", sub, gx, gok, wx, wok)
				}
				delete(ref, sub)
			} else {
				x++
				s.Put(sub, x)
				ref[sub] = x
			}
			checkSubIndex(t, s, ref, sub)
		}
	})
}

func checkSubIndex(t *rapid.T, s *subIndex, ref map[uint64]match.ID, probe uint64) {
	for _, sub := range []uint64{probe, probe + 1, probe - 1} {
		gx, gok := s.Get(sub)
		wx, wok := ref[sub]
		if gx != wx || gok != wok {
			t.Fatalf("Get(%d) = %d %v, want %d %v", sub, gx, gok, wx, wok)
		}
	}
	if s.Len() != len(ref) {
		t.Fatalf("Len %d, want %d", s.Len(), len(ref))
	}
	var got []uint64
	for sub, x := range s.All() {
		if ref[sub] != x {
			t.Fatalf("All yields %d -> %d, want %d", sub, x, ref[sub])
		}
		got = append(got, sub)
	}
	if want := slices.Sorted(maps.Keys(ref)); !slices.Equal(got, want) {
		t.Fatalf("All yields %v, want %v", got, want)
	}
	slots, live := 0, 0
	for _, r := range s.runs {
		slots += len(r.ids)
		live += r.live
	}
	if slots > (holesPerEntry+1)*live+len(s.runs)*max(minShrinkRun, maxGap+1) {
		t.Fatalf("runs hold %d slots for %d live entries in %d runs", slots, live, len(s.runs))
	}
	if live+len(s.sparse) != len(ref) || s.dead > len(s.runs) {
		t.Fatalf("%d in runs + %d in the map, want %d; %d dead of %d runs", live, len(s.sparse), len(ref), s.dead, len(s.runs))
	}
}

// TestSubIndexDense: a connection's ids in order, a batch's contiguous
// range, are held in one run (no map entry), and removing them all
// leaves nothing.
func TestSubIndexDense(t *testing.T) {
	s := newSubIndex()
	for i := range uint64(10_000) {
		s.Put(1+i, match.ID(i+1))
	}
	if len(s.runs) != 1 || len(s.sparse) != 0 {
		t.Fatalf("10,000 ids in order: %d runs, %d in the map", len(s.runs), len(s.sparse))
	}
	for i := range uint64(10_000) {
		if x, ok := s.Delete(1 + i); !ok || x != match.ID(i+1) {
			t.Fatalf("Delete(%d) = %d %v", 1+i, x, ok)
		}
	}
	if s.Len() != 0 || len(s.sparse) != 0 || len(s.runs) > 1 {
		t.Fatalf("after removing all: len %d, %d in the map, %d runs", s.Len(), len(s.sparse), len(s.runs))
	}
}
