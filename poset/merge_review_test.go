package poset

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// genMergeString draws filters that merge perfectly on a string or
// boolean attribute (string intervals, prefixes, points, booleans), with
// one of a few shared constraints elsewhere, some outside the complete
// fragment (suffix, contains).
func genMergeString() *rapid.Generator[match.Filter] {
	return rapid.Custom(func(t *rapid.T) match.Filter {
		strs := []string{"", "x", "xx", "xy", "y", "yx"}
		var cs []match.Constraint
		switch rapid.IntRange(0, 3).Draw(t, "shape") {
		case 0: // string interval
			lo := rapid.IntRange(0, len(strs)-1).Draw(t, "lo")
			hi := rapid.IntRange(lo, len(strs)-1).Draw(t, "hi")
			cs = append(cs,
				match.Constraint{Attr: "s", Op: rapid.SampledFrom([]match.Op{match.OpGe, match.OpGt}).Draw(t, "loop"), Val: match.Str(strs[lo])},
				match.Constraint{Attr: "s", Op: rapid.SampledFrom([]match.Op{match.OpLe, match.OpLt}).Draw(t, "hiop"), Val: match.Str(strs[hi])})
		case 1:
			cs = append(cs, match.Constraint{Attr: "s", Op: match.OpPrefix, Val: match.Str(rapid.SampledFrom(strs).Draw(t, "p"))})
		case 2:
			cs = append(cs, match.Constraint{Attr: "s", Op: match.OpEq, Val: match.Str(rapid.SampledFrom(strs).Draw(t, "e"))})
		default:
			cs = append(cs, match.Constraint{Attr: "t", Op: rapid.SampledFrom([]match.Op{match.OpEq, match.OpNe}).Draw(t, "bop"), Val: match.Bool(rapid.Bool().Draw(t, "b"))})
		}
		bases := [][]match.Constraint{
			nil,
			{{Attr: "a", Op: match.OpGe, Val: match.Int(2)}},
			{{Attr: "c", Op: match.OpSuffix, Val: match.Str("y")}},
			{{Attr: "c", Op: match.OpContains, Val: match.Str("x")}},
		}
		cs = append(cs, rapid.SampledFrom(bases).Draw(t, "base")...)
		return match.MustFilter(cs...)
	})
}

// TestMergerBatchProperty drives the merger as Table.finish does: each
// batch removes some held filters, then adds new ones (sometimes a copy
// of a held one: the unmerged set is a multiset), then flushes. After
// every batch the changes applied to a multiset rebuild the merged set
// (no filter is sent twice or removed when not sent), the merged set
// matches the unmerged set's events, no pair merges perfectly, and the
// merger's indexes (groups, candidate index, loose list, sources) hold
// exactly its items. Removing everything leaves every index empty.
func TestMergerBatchProperty(t *testing.T) {
	events := append(allEvents(), stringEvents()...)
	rapid.Check(t, func(t *rapid.T) {
		m := newMerger()
		var view, live []match.Filter
		gen := rapid.OneOf(genFilter(), genMergeable(), genMergeString())
		batch := func(rm, add []match.Filter) {
			for _, f := range rm {
				m.remove(f)
				i := slices.IndexFunc(live, f.Equal)
				live = slices.Delete(live, i, i+1)
			}
			for _, f := range add {
				m.add(f)
				live = append(live, f)
			}
			r, a := m.flush()
			view = applyChanges(t, view, r, a)
			merged := m.filtersSorted()
			if !slices.EqualFunc(view, merged, match.Filter.Equal) {
				t.Fatalf("changes rebuild %v, merger holds %v", view, merged)
			}
			checkSameEvents(t, merged, live, events)
			checkNoPerfectPair(t, merged)
			distinct := distinctFilters(live)
			checkSources(t, m, distinct)
			extra := 0
			for _, n := range m.extra {
				extra += n
			}
			if extra != len(live)-len(distinct) {
				t.Fatalf("merger counts %d copies, %d held", extra, len(live)-len(distinct))
			}
			checkMergerIndexes(t, m)
		}
		for range rapid.IntRange(1, 15).Draw(t, "batches") {
			var rm, add []match.Filter
			for _, f := range live {
				if rapid.IntRange(0, 3).Draw(t, "drop") == 0 {
					rm = append(rm, f)
				}
			}
			for range rapid.IntRange(0, 6).Draw(t, "adds") {
				f := gen.Draw(t, "f")
				if len(live) > 0 && rapid.IntRange(0, 5).Draw(t, "copy") == 0 {
					f = rapid.SampledFrom(live).Draw(t, "again") // a second node forwarding the same text
				}
				if match.Satisfiable(f) {
					add = append(add, f)
				}
			}
			batch(rm, add)
		}
		batch(slices.Clone(live), nil)
		if len(m.bySource)+len(m.extra)+len(m.byNode)+len(m.groups)+len(m.loose)+len(m.idx.groups)+len(m.delta) != 0 {
			t.Fatalf("empty merger keeps %d sources, %d counted copies, %d items, %d groups, %d loose, %d index groups, %d deltas",
				len(m.bySource), len(m.extra), len(m.byNode), len(m.groups), len(m.loose), len(m.idx.groups), len(m.delta))
		}
	})
}

// applyChanges applies removals then additions to a neighbour's multiset
// and returns it sorted; a removal of a filter not held, or an addition of
// one held already, fails.
func applyChanges(t *rapid.T, view, rm, add []match.Filter) []match.Filter {
	for _, g := range rm {
		i := slices.IndexFunc(view, g.Equal)
		if i < 0 {
			t.Fatalf("removes %s, which it never sent (holds %v)", g, view)
		}
		view = slices.Delete(view, i, i+1)
	}
	for _, g := range add {
		if slices.ContainsFunc(view, g.Equal) {
			t.Fatalf("adds %s, which it holds already (%v)", g, view)
		}
		view = append(view, g)
	}
	slices.SortFunc(view, match.Filter.Compare)
	return view
}

// checkMergerIndexes checks that the merger's groups, candidate index and
// loose list hold exactly its items, each where its filter says.
func checkMergerIndexes(t *rapid.T, m *merger) {
	exact, members := 0, 0
	for n, it := range m.byNode {
		if it.n != n {
			t.Fatalf("item %s filed under another node", it.filter())
		}
		if n.key.exact {
			exact++
		} else if it.lpos >= len(m.loose) || m.loose[it.lpos] != it {
			t.Fatalf("loose item %s not at its position", it.filter())
		}
		keys := groupKeys(it.filter())
		if !slices.Equal(keys, it.gkeys) {
			t.Fatalf("item %s has group keys %q, want %q", it.filter(), it.gkeys, keys)
		}
		for _, k := range keys {
			if g := m.groups[k]; g == nil || !slices.Contains(g.members, it) {
				t.Fatalf("item %s missing from its group %q", it.filter(), k)
			}
		}
		members += len(keys)
	}
	if len(m.loose) != len(m.byNode)-exact {
		t.Fatalf("%d loose items listed, %d held", len(m.loose), len(m.byNode)-exact)
	}
	inIdx := 0
	for _, g := range m.idx.groups {
		g.each(func(b []*node) {
			for i, n := range b {
				if m.byNode[n] == nil || int(n.ipos) != i {
					t.Fatalf("candidate index holds %s (position %d of %d), not an item there", n.key.f, n.ipos, i)
				}
				inIdx++
			}
		})
	}
	if inIdx != exact {
		t.Fatalf("candidate index holds %d nodes, %d exact items", inIdx, exact)
	}
	for k, g := range m.groups {
		n := len(g.rest)
		for v, l := range g.eq {
			if len(l) == 0 {
				t.Fatalf("group %q keeps an empty list for %q", k, v)
			}
			n += len(l)
		}
		if len(g.members) == 0 || n != len(g.members) {
			t.Fatalf("group %q: %d members, %d filed", k, len(g.members), n)
		}
		members -= len(g.members)
	}
	if members != 0 {
		t.Fatalf("groups hold %d members more than the items' keys", -members)
	}
}

// stringEvents is a grid of events over s, t, a and a string c, for the
// filters genMergeString draws.
func stringEvents() []match.Event {
	var out []match.Event
	for _, s := range []string{"", "x", "xa", "xx", "xxa", "xy", "xya", "xz", "y", "ya", "yx", "yxa", "z"} {
		for i, c := range []string{"", "y", "xy", "ax"} {
			attrs := []match.Attr{{Name: "s", Value: match.Str(s)}, {Name: "t", Value: match.Bool(i%2 == 0)}, {Name: "a", Value: match.Int(int64(i))}}
			if i > 0 {
				attrs = append(attrs, match.Attr{Name: "c", Value: match.Str(c)})
			}
			out = append(out, match.MustEvent(attrs...))
		}
		out = append(out, match.MustEvent(match.Attr{Name: "s", Value: match.Str(s)}))
	}
	return append(out, match.MustEvent(match.Attr{Name: "t", Value: match.Bool(true)}), match.MustEvent(match.Attr{Name: "t", Value: match.Bool(false)}))
}

// equivPool holds filters with several texts per equivalence class (and
// filters covering them), so that a forest, which may hold two
// equivalent nodes in different branches, forwards one text from two
// nodes.
var equivPool = []string{
	`t == false`, `t != true`, `t <= false`, `t == false && t exists`, `t exists`,
	`t == true`, `t != false`,
	`a == 1`, `a <= 1 && a >= 1`, `a >= 1`, `a < 1`, `a <= 1`, `a <= 5`, `a exists`,
	`s prefix "x"`, `s < "y" && s >= "x"`, `s == "xy"`, `s == "xy" && s prefix "x"`, `s exists`,
}

// TestTableMergeEquivalentTexts drives merging tables over equivalPool
// from clients and neighbours, with neighbours toggled, and checks after
// every step what TestTableForwardingProperty checks, plus that each
// neighbour's merger stands for exactly the unmerged forwarding set.
func TestTableMergeEquivalentTexts(t *testing.T) {
	events := append(allEvents(), stringEvents()...)
	neighbours := []Iface{1, 2}
	for _, structure := range []string{"poset", "forest"} {
		t.Run(structure, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				tab, err := NewTable(TableConfig{Structure: structure, Neighbours: neighbours, Merge: true})
				if err != nil {
					t.Fatal(err)
				}
				gen := rapid.Map(rapid.SampledFrom(equivPool), match.MustParse)
				driveTable(t, tab, neighbours, 9, gen, tab.Subscribe,
					func(us []Update, view neighbourView, live []tableSubRec, cur []Iface) {
						view.apply(t, us)
						checkTable(t, tab, view, live, cur, events, false)
						for _, nb := range cur {
							checkSources(t, tab.merged[nb], distinctFilters(tab.unmerged(nb)))
							checkNoPerfectPair(t, tab.Forwarded(nb))
						}
					})
			})
		})
	}
}

// TestTableMergeSameTextTwoNodes: a forest can hold two equivalent nodes
// in different branches, and both can forward the same text (an entry
// joins an equivalent node under another text, and the same text later
// becomes a node of its own elsewhere). The neighbour must keep that
// filter until neither forwards it.
func TestTableMergeSameTextTwoNodes(t *testing.T) {
	const t2 = "a <= 1 && a >= 1" // equivalent to a == 1
	steps := []struct {
		sub  bool
		from Iface
		f    string
	}{
		{true, 1, "a <= 1"},  // R0
		{true, 1, "a >= 1"},  // R1
		{true, 1, "a <= 5"},  // P adopts R0
		{true, 0, "a == 1"},  // E1 below R1
		{true, 2, t2},        // joins E1 under another text
		{false, 0, "a == 1"}, // E1 now forwards t2
		{false, 1, "a <= 5"}, // R0 is a root again, before R1
		{true, 3, t2},        // a node of its own below R0: t2 forwarded twice
		{false, 3, t2},       // E1 still forwards t2
	}
	for _, structure := range []string{"poset", "forest"} {
		for _, merge := range []bool{false, true} {
			tab, err := NewTable(TableConfig{Structure: structure, Neighbours: []Iface{1}, Merge: merge})
			if err != nil {
				t.Fatal(err)
			}
			view := neighbourView{}
			for _, s := range steps {
				f := match.MustParse(s.f)
				var us []Update
				if s.sub {
					us, err = tab.Subscribe(s.from, f)
				} else {
					us, err = tab.Unsubscribe(s.from, f)
				}
				if err != nil {
					t.Fatal(err)
				}
				view.apply(t, us)
			}
			e := match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)})
			if !slices.ContainsFunc(view[1], func(f match.Filter) bool { return f.Matches(e) }) {
				t.Errorf("%s merge=%v: neighbour 1 holds %v, misses %s (subscribed from 2)\n%s", structure, merge, view[1], e, tab.Structure())
			}
		}
	}
}

// distinctFilters returns fs sorted, each filter once.
func distinctFilters(fs []match.Filter) []match.Filter {
	out := slices.SortedFunc(slices.Values(fs), match.Filter.Compare)
	return slices.CompactFunc(out, match.Filter.Equal)
}
