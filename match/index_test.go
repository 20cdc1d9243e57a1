package match_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestIndexesAgreeWithScan runs random subscriptions and events through every
// registered index, with random deletes and re-inserts, and compares each
// event's matches with Scan's.
func TestIndexesAgreeWithScan(t *testing.T) {
	for _, info := range match.Indexes() {
		t.Run(info.Name, func(t *testing.T) {
			for seed := uint64(1); seed <= 6; seed++ {
				checkAgainstScan(t, info, seed, 3000)
			}
		})
	}
}

func checkAgainstScan(t *testing.T, info match.IndexInfo, seed uint64, n int) {
	t.Helper()
	g := match.NewTestGen(seed)
	r := rand.New(rand.NewPCG(seed, 7))
	idx, ref := info.New(), match.NewScan()
	var live []match.ID
	next := match.ID(0)
	insert := func() {
		f := g.Filter()
		id := next
		if seed%2 == 0 {
			id = next*7919 + 1<<40 // sparse ids, far apart
		}
		if err := idx.Insert(id, f); err != nil {
			t.Fatalf("seed %d: insert %d: %v", seed, id, err)
		}
		ref.Insert(id, f)
		live = append(live, id)
		next++
	}
	for range n {
		insert()
	}
	for round := range 4 {
		// Delete a random quarter, insert as many again.
		for range len(live) / 4 {
			i := r.IntN(len(live))
			id := live[i]
			live = slices.Delete(live, i, i+1)
			if err := idx.Delete(id); err != nil {
				t.Fatalf("seed %d: delete %d: %v", seed, id, err)
			}
			ref.Delete(id)
		}
		for range n / 5 {
			insert()
		}
		if idx.Len() != ref.Len() {
			t.Fatalf("seed %d round %d: Len %d, want %d", seed, round, idx.Len(), ref.Len())
		}
		if c, ok := idx.(match.Compacter); ok && round == 2 {
			c.Compact()
		}
		for range 200 {
			e := g.Event()
			got := match.SortIDs(idx.Match(e, nil))
			want := match.SortIDs(ref.Match(e, nil))
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d round %d: event %v: %s found %d matches, scan %d; differing:\n%s", seed, round, e, info.Name, len(got), len(want), explain(ref, got, want))
			}
		}
	}
}

func explain(ref *match.Scan, got, want []match.ID) string {
	s := ""
	for _, id := range symmetricDiff(got, want) {
		f, _ := ref.Filter(id)
		s += fmt.Sprintf("  %d: %v\n", id, f)
	}
	return s
}

func symmetricDiff(a, b []match.ID) []match.ID {
	var d []match.ID
	for _, x := range a {
		if !slices.Contains(b, x) {
			d = append(d, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			d = append(d, x)
		}
	}
	return d
}

func TestIndexErrors(t *testing.T) {
	for _, info := range match.Indexes() {
		idx := info.New()
		f := match.MustParse("a == 1")
		if err := idx.Insert(1, f); err != nil {
			t.Fatal(err)
		}
		if err := idx.Insert(1, f); err == nil {
			t.Errorf("%s: duplicate insert accepted", info.Name)
		}
		if err := idx.Delete(2); err == nil {
			t.Errorf("%s: delete of unknown id accepted", info.Name)
		}
		if idx.Len() != 1 {
			t.Errorf("%s: Len = %d after failed calls, want 1", info.Name, idx.Len())
		}
		e := match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)})
		if got := idx.Match(e, nil); !slices.Equal(got, []match.ID{1}) {
			t.Errorf("%s: match after failed calls = %v", info.Name, got)
		}
	}
}

func TestNewIndexUnknown(t *testing.T) {
	_, err := match.NewIndex("nope")
	if err == nil {
		t.Fatal("unknown index accepted")
	}
	for _, name := range []string{"scan", "fast"} {
		if !containsStr(err.Error(), name) {
			t.Errorf("error %q does not list %s", err, name)
		}
	}
}

func containsStr(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || containsStr(s[1:], sub))
}

// TestFastConfigsAgreeWithScan exercises the Fast index's cells, merges and
// rebuilds at small sizes, where the default configuration would keep one
// cell per dimension.
func TestFastConfigsAgreeWithScan(t *testing.T) {
	for _, cfg := range []match.FastConfig{
		{MaxCells: 8, BoundsPerCell: 4, TailSize: 16, MergeFactor: 2},
		{MaxCells: 64, BoundsPerCell: 1, TailSize: 1},
		{MaxCells: 3, BoundsPerCell: 2, TailSize: 100, MergeFactor: 8},
		{MaxCells: 8, BoundsPerCell: 4, TailSize: 16, MergeFactor: 2, SegmentSlots: 150},
	} {
		info := match.IndexInfo{Name: fmt.Sprintf("fast%+v", cfg), New: func() match.Index { return match.NewFast(cfg) }}
		for seed := uint64(1); seed <= 4; seed++ {
			checkAgainstScan(t, info, seed, 1500)
		}
	}
}
