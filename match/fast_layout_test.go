package match_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestResolveLayout checks the layout Fast takes by itself: the defaults
// below HugeSubscriptions, segments of 2^20, 24 cells and 3-byte slots
// from there on, and a caller's own settings kept at every size.
func TestResolveLayout(t *testing.T) {
	const huge = match.HugeSubscriptions
	for _, c := range []struct {
		cfg            match.FastConfig
		n              int
		seg, cells     int
		narrow         bool
		defaultSegment bool
	}{
		{match.FastConfig{}, 1_000_000, 0, 0, false, true},
		{match.FastConfig{}, huge - 1, 0, 0, false, true},
		{match.FastConfig{}, huge, 1 << 20, 24, true, false},
		{match.FastConfig{}, 10_000_000, 1 << 20, 24, true, false},
		{match.FastConfig{MaxCells: 32, SegmentSlots: 1 << 19}, 10_000_000, 1 << 19, 32, true, false},
		{match.FastConfig{WideSlots: true}, 10_000_000, 1 << 20, 24, false, false},
		{match.FastConfig{NarrowSlots: true}, 1000, 0, 0, true, true},
	} {
		got := c.cfg.Resolve(c.n)
		seg := got.SegmentSlots
		if c.defaultSegment {
			if want := (match.FastConfig{}).Resolve(0).SegmentSlots; seg != want {
				t.Errorf("%+v at %d: segments of %d, want the default %d", c.cfg, c.n, seg, want)
			}
		} else if seg != c.seg {
			t.Errorf("%+v at %d: segments of %d, want %d", c.cfg, c.n, seg, c.seg)
		}
		if got.MaxCells != c.cells || got.NarrowSlots != c.narrow {
			t.Errorf("%+v at %d: %d cells, narrow %v; want %d, %v", c.cfg, c.n, got.MaxCells, got.NarrowSlots, c.cells, c.narrow)
		}
	}
}

// layoutFilters returns n range filters over a few attributes, every
// 97th unsatisfiable (stored nowhere), and events over them.
func layoutFilters(n int) ([]match.Filter, []match.Event) {
	fs := make([]match.Filter, n)
	for i := range fs {
		a, lo := i%5, (i*37)%1000
		text := fmt.Sprintf("a%d >= %d && a%d < %d && b > %d", a, lo, a, lo+120, i%300)
		if i%97 == 0 {
			text = fmt.Sprintf("a%d > 10 && a%d < 5", a, a)
		}
		fs[i] = match.MustParse(text)
	}
	evs := make([]match.Event, 150)
	for j := range evs {
		evs[j] = match.MustEvent(
			match.Attr{Name: fmt.Sprintf("a%d", j%5), Value: match.Int(int64(j * 53 % 1100))},
			match.Attr{Name: "b", Value: match.Int(int64(j * 7 % 320))},
		)
	}
	return fs, evs
}

// TestSizedLoadTakesHugeLayout loads a few thousand subscriptions through
// loaders told of HugeSubscriptions, into Fast and into a Parallel of 3
// shards spread from the first: each takes the large-index layout before
// it builds, keeps it through inserts, deletes and Compact, and matches as
// Scan does throughout; the Parallel's shards hold their ids in one table.
func TestSizedLoadTakesHugeLayout(t *testing.T) {
	fs, evs := layoutFilters(6000)
	want := (match.FastConfig{}).Resolve(match.HugeSubscriptions)
	for _, kind := range []string{"fast", "parallel"} {
		var idx match.Index
		var fasts func() []*match.Fast
		switch kind {
		case "fast":
			x := match.NewFast(match.FastConfig{})
			idx, fasts = x, func() []*match.Fast { return []*match.Fast{x} }
		default:
			p := match.NewParallel(3, match.FastConfig{}).SetSplitAt(0)
			idx, fasts = p, p.ShardIndexes
		}
		ref := match.NewScan()
		l := match.NewSizedLoader(idx, match.HugeSubscriptions)
		for i, f := range fs[:5000] {
			if err := l.Add(match.ID(i), f); err != nil {
				t.Fatal(err)
			}
			ref.Insert(match.ID(i), f)
		}
		if err := l.Finish(); err != nil {
			t.Fatal(err)
		}
		check := func(step string) {
			t.Helper()
			for i, x := range fasts() {
				if got := x.Config(); got != want {
					t.Fatalf("%s %s: shard %d builds with %+v, want %+v", kind, step, i, got, want)
				}
			}
			if idx.Len() != ref.Len() {
				t.Fatalf("%s %s: Len %d, want %d", kind, step, idx.Len(), ref.Len())
			}
			for _, e := range evs {
				got, exp := match.SortIDs(idx.Match(e, nil)), match.SortIDs(ref.Match(e, nil))
				if !slices.Equal(got, exp) {
					t.Fatalf("%s %s: event %v: %d matches, scan %d", kind, step, e, len(got), len(exp))
				}
			}
		}
		check("after the load")
		for i := 5000; i < 6000; i++ {
			if err := idx.Insert(match.ID(i), fs[i]); err != nil {
				t.Fatal(err)
			}
			ref.Insert(match.ID(i), fs[i])
		}
		for i := 0; i < 6000; i += 3 { // every third, unsatisfiable ones too
			if err := idx.Delete(match.ID(i)); err != nil {
				t.Fatal(err)
			}
			ref.Delete(match.ID(i))
		}
		check("after inserts and deletes")
		idx.(match.Compacter).Compact()
		check("after Compact")
		if p, ok := idx.(*match.Parallel); ok {
			shared, dense := p.SharesIDTable()
			if !shared || dense > 2*6000+1024 {
				t.Fatalf("parallel: shards share one id table: %v, of %d dense entries for 6000 ids", shared, dense)
			}
		}
	}
}

// TestParallelSharedTableAgreesWithScan runs the random workload of
// checkAgainstScan (dense and sparse ids, deletes, inserts, Compact)
// through Parallels spread from the first subscription, whose shards
// share one id table.
func TestParallelSharedTableAgreesWithScan(t *testing.T) {
	for _, shards := range []int{2, 3} {
		cfg := match.FastConfig{MaxCells: 8, BoundsPerCell: 4, TailSize: 16, MergeFactor: 2}
		info := match.IndexInfo{
			Name: fmt.Sprintf("parallel/%d", shards),
			New:  func() match.Index { return match.NewParallel(shards, cfg).SetSplitAt(0) },
		}
		for seed := uint64(1); seed <= 4; seed++ {
			checkAgainstScan(t, info, seed, 1200)
		}
	}
}

// TestSizedLoadSegmentsAgreeWithScan loads in segments of 700 through
// loaders told the right size, too few and too many (the next builder's
// lists are presized from the last one's), with an attribute only the
// first segment has (presized in the second, then unused): every load
// matches as Scan does.
func TestSizedLoadSegmentsAgreeWithScan(t *testing.T) {
	fs, evs := layoutFilters(5000)
	for i := range 300 {
		fs[i] = match.MustParse(fmt.Sprintf("rare >= %d && rare < %d", i, i+40))
	}
	for j := range 30 {
		evs = append(evs, match.MustEvent(match.Attr{Name: "rare", Value: match.Int(int64(j * 11))}))
	}
	ref := match.NewScan()
	for i, f := range fs {
		ref.Insert(match.ID(i), f)
	}
	for _, expect := range []int{0, len(fs), len(fs) / 3, 3 * len(fs)} {
		for _, cfg := range []match.FastConfig{{SegmentSlots: 700, MaxCells: 8}, {SegmentSlots: 700, NarrowSlots: true}} {
			x := match.NewFast(cfg)
			l := match.NewSizedLoader(x, expect)
			for i, f := range fs {
				if err := l.Add(match.ID(i), f); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Finish(); err != nil {
				t.Fatal(err)
			}
			if x.Len() != ref.Len() {
				t.Fatalf("expect %d, %+v: Len %d, want %d", expect, cfg, x.Len(), ref.Len())
			}
			for _, e := range evs {
				got, want := match.SortIDs(x.Match(e, nil)), match.SortIDs(ref.Match(e, nil))
				if !slices.Equal(got, want) {
					t.Fatalf("expect %d, %+v: event %v: %d matches, scan %d", expect, cfg, e, len(got), len(want))
				}
			}
		}
	}
}
