package match_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestLoaderAgreesWithScan loads random filters through every index's
// loader (Fast's own, the collecting one for the others), then matches,
// inserts and deletes, comparing with Scan throughout.
func TestLoaderAgreesWithScan(t *testing.T) {
	small := match.IndexInfo{Name: "fast-segments-of-700", New: func() match.Index {
		return match.NewFast(match.FastConfig{SegmentSlots: 700})
	}}
	for _, info := range append(match.Indexes(), small) {
		t.Run(info.Name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				g := match.NewTestGen(seed)
				idx, ref := info.New(), match.NewScan()
				l := match.NewLoader(idx)
				for i := range 3000 {
					f := g.Filter()
					if err := l.Add(match.ID(i), f); err != nil {
						t.Fatal(err)
					}
					ref.Insert(match.ID(i), f)
				}
				if idx.Len() != 0 {
					t.Fatalf("Len %d before Finish", idx.Len())
				}
				if err := l.Finish(); err != nil {
					t.Fatal(err)
				}
				sameAsScan(t, idx, ref, g, 200)
				for i := range 500 {
					f := g.Filter()
					idx.Insert(match.ID(5000+i), f)
					ref.Insert(match.ID(5000+i), f)
					idx.Delete(match.ID(i * 3))
					ref.Delete(match.ID(i * 3))
				}
				sameAsScan(t, idx, ref, g, 200)
			}
		})
	}
}

// TestFastLoaderWidensAndMixes feeds Fast's loader numbers float32 holds,
// then one it does not (the builder widens its keys), then strings and
// bools on the same attribute (each class gets its own subscriptions).
func TestFastLoaderWidensAndMixes(t *testing.T) {
	var texts []string
	for i := range 300 {
		texts = append(texts, fmt.Sprintf("a >= %d && a < %d", i, i+40))
	}
	texts = append(texts, "a < 0.1", "a > 16777217", "a != 3.3")
	for i := range 100 {
		texts = append(texts, fmt.Sprintf("a >= %d.5", i), fmt.Sprintf(`a prefix "%c"`, 'a'+i%26), "a == true", "a exists")
	}
	idx, ref := match.NewFast(match.FastConfig{}), match.NewScan()
	l := idx.NewLoader()
	for i, s := range texts {
		f := match.MustParse(s)
		if err := l.Add(match.ID(i), f); err != nil {
			t.Fatal(err)
		}
		ref.Insert(match.ID(i), f)
	}
	if err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	var events []match.Event
	for _, v := range []string{"0", "0.05", "0.1", "3.3", "17.5", "99.5", "350", "16777217", "16777218", `"b"`, `"zz"`, "true", "false"} {
		e, err := match.ParseEventJSON([]byte(`{"a":` + v + `}`))
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	for _, e := range events {
		got, want := match.SortIDs(idx.Match(e, nil)), match.SortIDs(ref.Match(e, nil))
		if !slices.Equal(got, want) {
			t.Fatalf("event %v: fast %v, scan %v", e, got, want)
		}
	}
}

func sameAsScan(t *testing.T, idx match.Index, ref *match.Scan, g *match.TestGen, events int) {
	t.Helper()
	if idx.Len() != ref.Len() {
		t.Fatalf("Len %d, want %d", idx.Len(), ref.Len())
	}
	for range events {
		e := g.Event()
		got, want := match.SortIDs(idx.Match(e, nil)), match.SortIDs(ref.Match(e, nil))
		if !slices.Equal(got, want) {
			t.Fatalf("event %v: %d matches, scan %d", e, len(got), len(want))
		}
	}
}

// TestFastLoaderErrors: a repeated id fails Finish, a present one fails
// Add, and neither (nor an abandoned loader) changes the index.
func TestFastLoaderErrors(t *testing.T) {
	idx := match.NewFast(match.FastConfig{})
	if err := idx.Insert(7, match.MustParse("a > 1")); err != nil {
		t.Fatal(err)
	}
	l := idx.NewLoader()
	if err := l.Add(7, match.MustParse("a > 2")); err == nil || !strings.Contains(err.Error(), "7 already present") {
		t.Fatalf("Add of a present id: %v", err)
	}
	l.Add(1, match.MustParse("a > 3"))
	l.Add(2, match.MustParse("a > 3 && a < 2")) // unsatisfiable, stored nowhere
	l.Add(1, match.MustParse("a > 4"))
	if err := l.Finish(); err == nil || !strings.Contains(err.Error(), "1 already present") {
		t.Fatalf("Finish with a repeated id: %v", err)
	}
	// A repeat across segments built during the load.
	seg := match.NewFast(match.FastConfig{SegmentSlots: 2})
	sl := seg.NewLoader()
	for _, id := range []match.ID{1, 2, 3, 4, 5, 2} {
		sl.Add(id, match.MustParse("a > 3"))
	}
	if err := sl.Finish(); err == nil || !strings.Contains(err.Error(), "2 already present") || seg.Len() != 0 {
		t.Fatalf("Finish with an id repeated across segments: %v, Len %d", err, seg.Len())
	}
	// Dense ids are checked in a bitset, sparse ones sorted: a repeat is
	// found either way, in the builder, a built segment or among the
	// unsatisfiable filters; distinct ids load.
	for _, spacing := range []match.ID{1, 1 << 40} {
		for _, repeat := range [][]match.ID{{3, 1}, {0, 5}, {9, 9}, {2, 4}, nil} {
			x := match.NewFast(match.FastConfig{SegmentSlots: 3})
			xl := x.NewLoader()
			for i := range 10 {
				f := match.MustParse("a > 3")
				if i == 4 || i == 9 {
					f = match.MustParse("a > 3 && a < 2") // unsatisfiable
				}
				id := match.ID(i)
				if repeat != nil && i == int(repeat[0]) {
					id = repeat[1]
				}
				xl.Add(id*spacing, f)
			}
			err := xl.Finish()
			if repeat == nil || repeat[0] == repeat[1] {
				if err != nil || x.Len() != 10 {
					t.Fatalf("spacing %d, distinct ids: %v, Len %d", spacing, err, x.Len())
				}
				continue
			}
			want := fmt.Sprintf("%d already present", repeat[1]*spacing)
			if err == nil || !strings.Contains(err.Error(), want) || x.Len() != 0 {
				t.Fatalf("spacing %d, id %d repeated: %v, Len %d", spacing, repeat[1], err, x.Len())
			}
		}
	}
	if err := l.Add(3, match.MustParse("a > 1")); err == nil {
		t.Fatal("Add after Finish accepted")
	}
	abandoned := idx.NewLoader()
	abandoned.Add(9, match.MustParse("a > 0"))
	e, _ := match.ParseEventJSON([]byte(`{"a":10}`))
	if got := idx.Match(e, nil); idx.Len() != 1 || !slices.Equal(got, []match.ID{7}) {
		t.Fatalf("after failed loads: Len %d, matches %v", idx.Len(), got)
	}
}

// TestSubscriptionReader reads back written filters, counting the bytes
// and skipping comments, and locates a bad line.
func TestSubscriptionReader(t *testing.T) {
	g := match.NewTestGen(3)
	var filters []match.Filter
	for range 500 {
		filters = append(filters, g.Filter())
	}
	var buf bytes.Buffer
	buf.WriteString("# comment\n\n")
	if err := match.WriteSubscriptions(&buf, filters); err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	r := match.NewSubscriptionReader(&buf)
	for i := 0; ; i++ {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(filters) || r.Count() != i || r.Bytes() != size {
				t.Fatalf("read %d filters (Count %d) of %d bytes, want %d of %d", i, r.Count(), r.Bytes(), len(filters), size)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !f.Equal(filters[i]) {
			t.Fatalf("filter %d: %v, want %v", i, f, filters[i])
		}
	}
	_, err := match.NewSubscriptionReader(strings.NewReader("a > 1\n\na >\n")).Next()
	if err != nil {
		t.Fatal(err)
	}
	r = match.NewSubscriptionReader(strings.NewReader("a > 1\n\na >\n"))
	r.Next()
	var le *match.LineError
	if _, err := r.Next(); !errors.As(err, &le) || le.Line != 3 {
		t.Fatalf("bad line: %v", err)
	}
}

// TestParallelAgreesWithScan runs the insert/delete/compact differential
// of every index with 1, 2 and 3 shards spread from the first insert, and
// with 2 shards spread from the 700th (mid-way through the inserts) and
// never, forcing goroutines even where the machine has one core.
func TestParallelAgreesWithScan(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		ats := []int{0}
		if n == 2 {
			ats = []int{0, 700, 1 << 30}
		}
		for _, at := range ats {
			for _, cfg := range []match.FastConfig{{}, {MaxCells: 8, BoundsPerCell: 4, TailSize: 16, MergeFactor: 2}} {
				info := match.IndexInfo{Name: fmt.Sprintf("parallel-%d-at-%d%+v", n, at, cfg), New: func() match.Index { return match.NewParallel(n, cfg).SetSplitAt(at) }}
				for seed := uint64(1); seed <= 2; seed++ {
					checkAgainstScan(t, info, seed, 1500)
				}
			}
		}
	}
}

// TestParallelLoadSpreads: loads into a Parallel that already holds
// inserted subscriptions, below the split size (gathered into the first
// shard) and across it (everything spread), agree with Scan and spread
// exactly when the total reaches the split size.
func TestParallelLoadSpreads(t *testing.T) {
	for _, c := range []struct {
		inserted, loaded, splitAt int
		spread                    bool
	}{
		{300, 500, 1000, false},
		{300, 700, 1000, true},
		{0, 2000, 1000, true},
		{999, 0, 1000, false},
		{1000, 0, 1000, true},
	} {
		g := match.NewTestGen(uint64(c.inserted + c.loaded))
		p, ref := match.NewParallel(2, match.FastConfig{TailSize: 64}).SetSplitAt(c.splitAt), match.NewScan()
		for i := range c.inserted {
			f := g.Filter()
			if err := p.Insert(match.ID(i), f); err != nil {
				t.Fatal(err)
			}
			ref.Insert(match.ID(i), f)
		}
		l := p.NewLoader()
		for i := range c.loaded {
			id, f := match.ID(c.inserted+i), g.Filter()
			if err := l.Add(id, f); err != nil {
				t.Fatal(err)
			}
			ref.Insert(id, f)
		}
		if c.inserted > 0 {
			if err := l.Add(0, g.Filter()); err == nil {
				t.Fatalf("%+v: Add of a present id accepted", c)
			}
		}
		if err := l.Finish(); err != nil {
			t.Fatal(err)
		}
		if p.Spread() != c.spread {
			t.Fatalf("%+v: spread %v", c, p.Spread())
		}
		sameAsScan(t, p, ref, g, 300)
	}
}

// TestParallelLoaderErrors: a repeated id fails the load of a sharded
// index, leaving every shard unchanged.
func TestParallelLoaderErrors(t *testing.T) {
	p := match.NewParallel(3, match.FastConfig{})
	ids := []match.ID{1, 2, 3, 4, 5, 3}
	filters := make([]match.Filter, len(ids))
	for i := range filters {
		filters[i] = match.MustParse(fmt.Sprintf("a > %d", i))
	}
	if err := p.Load(ids, filters); err == nil || !strings.Contains(err.Error(), "3 already present") {
		t.Fatalf("load with a repeated id: %v", err)
	}
	if p.Len() != 0 {
		t.Fatalf("Len %d after a failed load", p.Len())
	}
	if err := p.Load(ids[:5], filters[:5]); err != nil || p.Len() != 5 {
		t.Fatalf("load: %v, Len %d", err, p.Len())
	}
}
