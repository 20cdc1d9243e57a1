package client

import (
	"testing"

	"pgregory.net/rapid"
)

// TestSubTableAgreesWithMap runs random subscribe (next id), unsubscribe,
// lookup and drain sequences against a map: the table holds exactly what
// the map holds, and frees a page once it holds nothing.
func TestSubTableAgreesWithMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tab subTable
		model := map[uint64]*Subscription{}
		next := uint64(0)
		for range rapid.IntRange(0, 400).Draw(t, "steps") {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2, 3: // subscribe: the next id, sometimes after a gap
				next += 1 + uint64(rapid.IntRange(0, 1).Draw(t, "gap"))*uint64(rapid.IntRange(0, 3*subPage).Draw(t, "skip"))
				s := &Subscription{id: next}
				tab.put(s)
				model[next] = s
			case 4, 5, 6: // unsubscribe a random id (present or not)
				id := rapid.Uint64Range(0, next+1).Draw(t, "id")
				if got, want := tab.remove(id), model[id]; got != want {
					t.Fatalf("remove(%d) = %p, want %p", id, got, want)
				}
				delete(model, id)
			case 7, 8: // lookup
				id := rapid.Uint64Range(0, next+1).Draw(t, "id")
				if got, want := tab.get(id), model[id]; got != want {
					t.Fatalf("get(%d) = %p, want %p", id, got, want)
				}
			case 9: // connection ends
				got := tab.drain()
				if len(got) != len(model) {
					t.Fatalf("drain returned %d subscriptions, want %d", len(got), len(model))
				}
				for _, s := range got {
					if model[s.id] != s {
						t.Fatalf("drain returned %d, not held", s.id)
					}
				}
				clear(model)
			}
		}
		for id, s := range model {
			if tab.get(id) != s {
				t.Fatalf("get(%d) lost", id)
			}
		}
		ps := tab.list()
		for i := range ps {
			if pg := ps[i].Load(); pg != nil && pg.live == 0 {
				t.Fatalf("page %d is empty but kept", i)
			}
		}
	})
}
