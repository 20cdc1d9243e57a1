package match_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sift-pubsub/sift/match"
)

// batchIndexes are the indexes whose MatchBatch the tests check: Parallel
// of 1, 2 and 3 shards spread from the start (goroutines whatever the
// core count), in the
// default and a small configuration, and Fast through the generic loop.
func batchIndexes() []match.IndexInfo {
	var out []match.IndexInfo
	for _, n := range []int{1, 2, 3} {
		for _, cfg := range []match.FastConfig{{}, {MaxCells: 8, BoundsPerCell: 4, TailSize: 16, MergeFactor: 2}} {
			out = append(out, match.IndexInfo{Name: fmt.Sprintf("parallel-%d%+v", n, cfg), New: func() match.Index { return match.NewParallel(n, cfg).SetSplitAt(0) }})
		}
	}
	return append(out, match.IndexInfo{Name: "fast", New: func() match.Index { return match.NewFast(match.FastConfig{}) }})
}

// TestMatchBatchAgreesWithScan loads random filters, then alternates
// random deletes and inserts with batches of 0 to 40 events, checking
// each event's matches in the batch against Scan's, and that MatchBatch
// appends: every dst starts with a sentinel it must keep.
func TestMatchBatchAgreesWithScan(t *testing.T) {
	const sentinel = match.ID(1<<63 + 5)
	for _, info := range batchIndexes() {
		t.Run(info.Name, func(t *testing.T) {
			for seed := uint64(1); seed <= 2; seed++ {
				g := match.NewTestGen(seed)
				r := rand.New(rand.NewPCG(seed, 11))
				idx, ref := info.New(), match.NewScan()
				ids := make([]match.ID, 2000)
				filters := make([]match.Filter, len(ids))
				for i := range ids {
					ids[i], filters[i] = match.ID(i*3+1), g.Filter()
					ref.Insert(ids[i], filters[i])
				}
				if err := match.Load(idx, ids, filters); err != nil {
					t.Fatal(err)
				}
				live, next := slices.Clone(ids), match.ID(10_000)
				var dsts [][]match.ID
				for round := range 12 {
					for range 60 {
						i := r.IntN(len(live))
						if err := idx.Delete(live[i]); err != nil {
							t.Fatal(err)
						}
						ref.Delete(live[i])
						live = slices.Delete(live, i, i+1)
						f := g.Filter()
						if err := idx.Insert(next, f); err != nil {
							t.Fatal(err)
						}
						ref.Insert(next, f)
						live, next = append(live, next), next+1
					}
					evs := make([]match.Event, r.IntN(41))
					for j := range evs {
						evs[j] = g.Event()
					}
					for j := range dsts {
						dsts[j] = append(dsts[j][:0], sentinel)
					}
					kept := len(dsts)
					dsts = match.MatchBatch(idx, evs, dsts)
					if len(dsts) != len(evs) {
						t.Fatalf("round %d: %d results for %d events", round, len(dsts), len(evs))
					}
					for j, e := range evs {
						got := dsts[j]
						if j < kept {
							if len(got) == 0 || got[0] != sentinel {
								t.Fatalf("round %d event %d: the dst's prefix was not kept: %v", round, j, got)
							}
							got = got[1:]
						}
						got = match.SortIDs(slices.Clone(got))
						want := match.SortIDs(ref.Match(e, nil))
						if !slices.Equal(got, want) {
							t.Fatalf("round %d event %d %v: %d matches, scan %d; differing:\n%s", round, j, e, len(got), len(want), explain(ref, got, want))
						}
					}
				}
			}
		})
	}
}

// TestMatchBatchPropertyEqualsMatch: for any batch drawn from a fixed
// pool of events, with repeats, a two-shard Parallel's MatchBatch gives
// each event exactly the matches its own Match gives.
func TestMatchBatchPropertyEqualsMatch(t *testing.T) {
	g := match.NewTestGen(9)
	p := match.NewParallel(2, match.FastConfig{MaxCells: 8, BoundsPerCell: 4, TailSize: 16, MergeFactor: 2}).SetSplitAt(0)
	for i := range 1500 {
		if err := p.Insert(match.ID(i), g.Filter()); err != nil {
			t.Fatal(err)
		}
	}
	pool := make([]match.Event, 64)
	for i := range pool {
		pool[i] = g.Event()
	}
	rapid.Check(t, func(t *rapid.T) {
		picks := rapid.SliceOfN(rapid.IntRange(0, len(pool)-1), 0, 30).Draw(t, "events")
		evs := make([]match.Event, len(picks))
		for j, k := range picks {
			evs[j] = pool[k]
		}
		dsts := p.MatchBatch(evs, nil)
		for j, e := range evs {
			got := match.SortIDs(slices.Clone(dsts[j]))
			want := match.SortIDs(p.Match(e, nil))
			if !slices.Equal(got, want) {
				t.Fatalf("event %d: batch %v, match %v", j, got, want)
			}
		}
	})
}
