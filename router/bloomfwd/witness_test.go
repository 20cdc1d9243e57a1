package bloomfwd

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom/bloomtest"
	"github.com/sift-pubsub/sift/router/mesh"
)

// TestRouteWitnessIsRoute: for random filters held by three links, changed
// by snapshots, additions and removals (so that the witness index follows
// the trees), and random events, RouteWitness gives exactly Route's links
// whatever the witness: the hash of a filter the event matches, of one it
// does not, of one no link holds, a random number or none; and the
// witness does decide some links (the check is exercised).
func TestRouteWitnessIsRoute(t *testing.T) {
	for _, index := range []string{"sbstree", "bftree"} {
		rng := rand.New(rand.NewPCG(23, 7))
		decided := 0
		for range 40 {
			cfg := Config{Index: index}
			d, err := NewDict(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := NewTrees(cfg)
			if err != nil {
				t.Fatal(err)
			}
			pool := make([]match.Filter, 24)
			for i := range pool {
				pool[i] = bloomtest.RandomFilter(rng)
				d.AddFilter(pool[i])
			}
			held := map[mesh.Link][]string{}
			for l := mesh.Link(1); l <= 3; l++ {
				tr.LinkUp(l)
			}
			for step := range 12 {
				l := mesh.Link(1 + rng.IntN(3))
				r := &wire.Routes{Gen: 1, Seq: uint64(step + 1)}
				switch {
				case step < 3 || rng.IntN(5) == 0:
					r.Snapshot = true
					held[l] = nil
					for range rng.IntN(12) {
						r.Add = append(r.Add, pool[rng.IntN(len(pool))].String())
					}
					held[l] = append(held[l], r.Add...)
				case len(held[l]) > 0 && rng.IntN(2) == 0:
					i := rng.IntN(len(held[l]))
					r.Remove = []string{held[l][i]}
					held[l] = slices.Delete(held[l], i, i+1)
				default:
					r.Add = []string{pool[rng.IntN(len(pool))].String()}
					held[l] = append(held[l], r.Add...)
				}
				if err := tr.Routes(l, r); err != nil {
					t.Fatalf("routes %+v: %v", r, err)
				}
				for range 20 {
					e := bloomtest.RandomEvent(rng)
					sum := d.Summarize(e)
					if sum.Exact {
						continue
					}
					from := mesh.Link(rng.IntN(4)) // 0: a local client
					want, err := tr.Route(sum.Words, from, nil)
					if err != nil {
						t.Fatal(err)
					}
					var witnesses []uint64
					for _, f := range pool {
						if f.Matches(e) {
							witnesses = append(witnesses, wire.FilterHash(f.String()))
						}
					}
					witnesses = append(witnesses, 0, rng.Uint64(), wire.FilterHash(pool[rng.IntN(len(pool))].String()))
					for _, w := range witnesses {
						got, d, err := tr.RouteWitness(sum.Words, from, w, nil)
						if err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(got, want) {
							t.Fatalf("%s: event %v from %d, witness %x: %v, Route %v", index, e, from, w, got, want)
						}
						byWitness := 0
						for _, l := range got {
							if w != 0 && tr.links[l].witnessed(sum.Words, w) {
								byWitness++
							}
						}
						others := len(tr.order)
						if slices.Contains(tr.order, from) {
							others--
						}
						if d != (Decided{Witness: byWitness, Walks: others - byWitness}) {
							t.Fatalf("%s: decided %+v, want %d by witness and %d walks (%d links but the origin)", index, d, byWitness, others-byWitness, others)
						}
						decided += byWitness
					}
				}
			}
			for l, texts := range held { // the index holds exactly the held filters
				checkHeld(t, tr.links[l], texts)
			}
		}
		if decided == 0 {
			t.Fatalf("%s: no link was decided by its witness", index)
		}
	}
}

// TestRouteWitnessBadSummary: a summary of the wrong size is Route's
// error, with or without a witness.
func TestRouteWitnessBadSummary(t *testing.T) {
	tr, err := NewTrees(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tr.LinkUp(1)
	_, want := tr.Route(make([]uint64, 3), 0, nil)
	_, _, got := tr.RouteWitness(make([]uint64, 3), 0, 42, nil)
	if want == nil || got == nil || got.Error() != want.Error() {
		t.Fatalf("RouteWitness %v, Route %v", got, want)
	}
}

// checkHeld fails unless lt holds exactly the filters of texts, with
// their multiplicities, each under its own witness.
func checkHeld(t *testing.T, lt *linkTree, texts []string) {
	t.Helper()
	want := map[string]int{}
	for _, text := range texts {
		want[match.MustParse(text).String()]++
	}
	got := map[string]int{}
	for w, hs := range lt.byWitness {
		for _, h := range hs {
			text := h.f.String()
			if wire.FilterHash(text) != w || h.n <= 0 || got[text] != 0 {
				t.Fatalf("%q held under witness %#x with %d copies (seen before: %d)", text, w, h.n, got[text])
			}
			got[text] = h.n
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("the link holds %v, was sent %v", got, want)
	}
}
