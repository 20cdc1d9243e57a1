package poset

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// genMergeable draws filters that often merge perfectly: an interval on a
// or b, with one of a few shared constraints on the other attributes.
func genMergeable() *rapid.Generator[match.Filter] {
	return rapid.Custom(func(t *rapid.T) match.Filter {
		attr := rapid.SampledFrom([]string{"a", "b"}).Draw(t, "iattr")
		lo := rapid.IntRange(0, 6).Draw(t, "lo")
		hi := lo + rapid.IntRange(0, 3).Draw(t, "width")
		loOp := rapid.SampledFrom([]match.Op{match.OpGe, match.OpGt}).Draw(t, "loop")
		hiOp := rapid.SampledFrom([]match.Op{match.OpLe, match.OpLt}).Draw(t, "hiop")
		cs := []match.Constraint{
			{Attr: attr, Op: loOp, Val: match.Int(int64(lo))},
			{Attr: attr, Op: hiOp, Val: match.Int(int64(hi))},
		}
		bases := [][]match.Constraint{
			nil,
			{{Attr: "s", Op: match.OpEq, Val: match.Str("x")}},
			{{Attr: "t", Op: match.OpEq, Val: match.Bool(true)}},
			{{Attr: "s", Op: match.OpSuffix, Val: match.Str("y")}},
		}
		cs = append(cs, rapid.SampledFrom(bases).Draw(t, "base")...)
		if other := map[string]string{"a": "b", "b": "a"}[attr]; rapid.Bool().Draw(t, "other") {
			v := rapid.IntRange(0, 6).Draw(t, "ov")
			cs = append(cs, match.Constraint{Attr: other, Op: match.OpGe, Val: match.Int(int64(v))})
		}
		return match.MustFilter(cs...)
	})
}

// mergerRun applies random adds and removes of distinct satisfiable filters
// to a merger and records, per step, the changes it returned.
type mergerRun struct {
	m     *merger
	view  []match.Filter // what a neighbour holds after applying the changes
	live  []match.Filter // the unmerged set
	trace strings.Builder
}

func (r *mergerRun) step(t *rapid.T, f match.Filter, add bool) {
	if add {
		r.m.add(f)
		r.live = append(r.live, f)
	} else {
		r.m.remove(f)
		r.live = slices.DeleteFunc(r.live, f.Equal)
	}
	rm, ad := r.m.flush()
	fmt.Fprintf(&r.trace, "%v %s: -%v +%v\n", add, f, rm, ad)
	for _, g := range rm {
		i := slices.IndexFunc(r.view, g.Equal)
		if i < 0 {
			t.Fatalf("merger removes %s, which it never sent (holds %v)", g, r.view)
		}
		r.view = slices.Delete(r.view, i, i+1)
	}
	r.view = append(r.view, ad...)
	slices.SortFunc(r.view, match.Filter.Compare)
}

// TestMergerProperty checks the merger against brute force after every
// step of random add/remove sequences: the changes it returns rebuild its
// merged set; for every event some merged filter matches iff some
// unmerged filter matches; no two merged filters merge perfectly
// (match.Merge); every unmerged filter is a source of exactly one merged
// filter, which covers it; and a second merger fed the same sequence
// returns the same changes.
func TestMergerProperty(t *testing.T) {
	events := allEvents()
	rapid.Check(t, func(t *rapid.T) {
		a, b := &mergerRun{m: newMerger()}, &mergerRun{m: newMerger()}
		gen := rapid.OneOf(genFilter(), genMergeable(), genMergeable())
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			add := len(a.live) == 0 || rapid.IntRange(0, 2).Draw(t, "op") > 0
			var f match.Filter
			if add {
				f = gen.Draw(t, "f")
				if !match.Satisfiable(f) || slices.ContainsFunc(a.live, f.Equal) {
					continue
				}
			} else {
				f = rapid.SampledFrom(a.live).Draw(t, "victim")
			}
			a.step(t, f, add)
			b.step(t, f, add)
			merged := a.m.filtersSorted()
			if !slices.EqualFunc(a.view, merged, match.Filter.Equal) {
				t.Fatalf("changes rebuild %v, merger holds %v", a.view, merged)
			}
			checkSameEvents(t, merged, a.live, append(events, rapid.SliceOfN(genEvent(), 5, 5).Draw(t, "events")...))
			checkNoPerfectPair(t, merged)
			checkSources(t, a.m, a.live)
			if a.trace.String() != b.trace.String() {
				t.Fatalf("same sequence, different changes:\n%s\nvs\n%s", a.trace.String(), b.trace.String())
			}
		}
	})
}

func checkSameEvents(t *rapid.T, merged, live []match.Filter, events []match.Event) {
	for _, e := range events {
		m := slices.ContainsFunc(merged, func(f match.Filter) bool { return f.Matches(e) })
		u := slices.ContainsFunc(live, func(f match.Filter) bool { return f.Matches(e) })
		if m != u {
			t.Fatalf("event %s: merged %v matches %v, unmerged %v matches %v", e, merged, m, live, u)
		}
	}
}

// checkNoPerfectPair checks the merged set's invariant by brute force.
func checkNoPerfectPair(t interface{ Fatalf(string, ...any) }, fs []match.Filter) {
	for i, f := range fs {
		for _, g := range fs[i+1:] {
			if m, ok := match.Merge(f, g); ok {
				t.Fatalf("%s and %s still merge perfectly into %s (set %v)", f, g, m, fs)
			}
		}
	}
}

func checkSources(t *rapid.T, m *merger, live []match.Filter) {
	n := 0
	for _, it := range m.byNode {
		n += len(it.sources)
		for _, s := range it.sources {
			if m.bySource[s.String()] != it {
				t.Fatalf("source %s of %s indexed under another item", s, it.filter())
			}
			if !match.Covers(it.filter(), s) {
				t.Fatalf("merged %s does not cover its source %s", it.filter(), s)
			}
		}
	}
	if n != len(live) || len(m.bySource) != len(live) {
		t.Fatalf("%d sources, %d indexed, %d unmerged filters", n, len(m.bySource), len(live))
	}
	for _, f := range live {
		if m.bySource[f.String()] == nil {
			t.Fatalf("unmerged %s stands for by no merged filter", f)
		}
	}
}

// TestMergerExample: adjacent ranges merge into one, a covered filter
// joins it, and removing the middle range splits it again.
func TestMergerExample(t *testing.T) {
	m := newMerger()
	steps := []struct {
		add  bool
		f    string
		want string
	}{
		{true, "p >= 0 && p < 10", "-[] +[p < 10 && p >= 0]"},
		{true, "p >= 20 && p <= 30", "-[] +[p <= 30 && p >= 20]"},
		{true, "p >= 10 && p < 20", "-[p < 10 && p >= 0 p <= 30 && p >= 20] +[p <= 30 && p >= 0]"},
		{true, "p >= 5 && p <= 6", "-[] +[]"},
		{true, "p > 30 && s == \"x\"", "-[] +[p > 30 && s == \"x\"]"},
		{false, "p >= 10 && p < 20", "-[p <= 30 && p >= 0] +[p < 10 && p >= 0 p <= 30 && p >= 20]"},
		{false, "p >= 0 && p < 10", "-[p < 10 && p >= 0] +[p <= 6 && p >= 5]"},
	}
	for _, s := range steps {
		f := match.MustParse(s.f)
		if s.add {
			m.add(f)
		} else {
			m.remove(f)
		}
		rm, ad := m.flush()
		if got := fmt.Sprintf("-%v +%v", rm, ad); got != s.want {
			t.Errorf("add=%v %s: %s, want %s", s.add, s.f, got, s.want)
		}
	}
}
