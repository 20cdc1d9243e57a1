package poset

import (
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// neighbourView is what a neighbour holds from the router under test: the
// multiset of filters after applying every update in order.
type neighbourView map[Iface][]match.Filter

func (v neighbourView) apply(t interface{ Fatalf(string, ...any) }, us []Update) {
	for _, u := range us {
		for _, f := range u.Remove {
			i := slices.IndexFunc(v[u.To], f.Equal)
			if i < 0 {
				t.Fatalf("update %s removes a filter the neighbour does not hold", u)
			}
			v[u.To] = slices.Delete(v[u.To], i, i+1)
		}
		v[u.To] = append(v[u.To], u.Add...)
	}
}

type tableSubRec struct {
	from Iface
	f    match.Filter
}

// TestTableForwardingProperty drives random subscribe/unsubscribe sequences
// and checks, after each step, that the neighbours hold exactly what the
// table says it forwarded, that an event would be forwarded to exactly the
// neighbours beyond which a matching subscription exists, that the poset's
// forwarding sets are SIENA's minimal ones, that with merging no two
// filters forwarded to a neighbour still merge perfectly, and that
// unsubscribing everything empties the table and every forwarding set.
func TestTableForwardingProperty(t *testing.T) {
	events := allEvents()
	neighbours := []Iface{1, 2, 3}
	for _, structure := range []string{"poset", "forest", "shallow"} {
		for _, mode := range []string{"plain", "merge", "ff", "ff+merge"} {
			merge, ff := strings.Contains(mode, "merge"), strings.HasPrefix(mode, "ff")
			if ff && structure == "shallow" {
				continue // the shallow forest refuses fixed filters (TestShallowRefusesAssist)
			}
			t.Run(structure+"/"+mode, func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) {
					tab, err := NewTable(TableConfig{Structure: structure, Neighbours: neighbours, Merge: merge})
					if err != nil {
						t.Fatal(err)
					}
					if ff {
						if err := tab.Pin(fixedFilters); err != nil {
							t.Fatal(err)
						}
					}
					gen := genFilter()
					if merge { // filters that merge perfectly, often
						gen = rapid.OneOf(genFilter(), genMergeable())
					}
					subscribe := tab.Subscribe
					if ff {
						subscribe = func(from Iface, f match.Filter) ([]Update, error) {
							us, _, err := tab.SubscribeFF(from, f, []Bits{FixedCovering(tab.Fixed(), f)}, Verify)
							return us, err
						}
					}
					view, live, cur := driveTable(t, tab, neighbours, 7, gen, subscribe,
						func(us []Update, view neighbourView, live []tableSubRec, cur []Iface) {
							checkUpdatesWellFormed(t, us, cur)
							view.apply(t, us)
							checkTable(t, tab, view, live, cur, events, structure == "poset" && mode == "plain")
							if merge {
								for _, nb := range cur {
									checkNoPerfectPair(t, tab.Forwarded(nb))
								}
							}
						})
					for _, s := range live {
						us, err := tab.Unsubscribe(s.from, s.f)
						if err != nil {
							t.Fatal(err)
						}
						view.apply(t, us)
					}
					for _, nb := range cur {
						if len(view[nb]) != 0 || len(tab.Forwarded(nb)) != 0 {
							t.Fatalf("neighbour %d still holds %v (table: %v)", nb, view[nb], tab.Forwarded(nb))
						}
					}
					if tab.Len() != 0 || tab.s.Nodes() != len(tab.s.fixed) { // only the fixed filters stay
						t.Fatalf("table not empty:\n%s", tab.Structure())
					}
				})
			})
		}
	}
}

// driveTable drives tab for a rapid-drawn number of steps from clients
// 0-3 and neighbours: one step in toggleOdds+1 toggles a neighbour, the
// others subscribe a filter drawn from gen (with subscribe) or unsubscribe
// a live one. check gets every step's updates, which it applies to view.
// It returns the view, the live subscriptions and the neighbours present.
func driveTable(t *rapid.T, tab *Table, neighbours []Iface, toggleOdds int, gen *rapid.Generator[match.Filter],
	subscribe func(Iface, match.Filter) ([]Update, error),
	check func(us []Update, view neighbourView, live []tableSubRec, cur []Iface)) (neighbourView, []tableSubRec, []Iface) {
	view := neighbourView{}
	var live []tableSubRec
	cur := slices.Clone(neighbours)
	for range rapid.IntRange(1, 30).Draw(t, "steps") {
		var us []Update
		var err error
		if rapid.IntRange(0, toggleOdds).Draw(t, "toggle") == 0 {
			cur = toggleNeighbour(t, tab, view, cur, rapid.SampledFrom(neighbours).Draw(t, "nb"))
		} else if len(live) == 0 || rapid.IntRange(0, 2).Draw(t, "op") > 0 {
			s := tableSubRec{Iface(rapid.IntRange(0, 3).Draw(t, "from")), gen.Draw(t, "f")}
			us, err = subscribe(s.from, s.f)
			live = append(live, s)
		} else {
			i := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
			us, err = tab.Unsubscribe(live[i].from, live[i].f)
			live = slices.Delete(live, i, i+1)
		}
		if err != nil {
			t.Fatal(err)
		}
		check(us, view, live, cur)
	}
	return view, live, cur
}

// toggleNeighbour removes nb from the table's neighbours if it is one
// (the neighbour forgets what it held) and adds it otherwise (it holds the
// update AddNeighbour returns); it returns the new neighbour list.
func toggleNeighbour(t *rapid.T, tab *Table, view neighbourView, cur []Iface, nb Iface) []Iface {
	if slices.Contains(cur, nb) {
		if err := tab.RemoveNeighbour(nb); err != nil {
			t.Fatal(err)
		}
		if err := tab.RemoveNeighbour(nb); err == nil {
			t.Fatalf("neighbour %d removed twice", nb)
		}
		delete(view, nb)
		return slices.DeleteFunc(cur, func(i Iface) bool { return i == nb })
	}
	u, err := tab.AddNeighbour(nb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.AddNeighbour(nb); err == nil {
		t.Fatalf("neighbour %d added twice", nb)
	}
	if u.To != nb || len(u.Remove) != 0 {
		t.Fatalf("AddNeighbour(%d) returned %s", nb, u)
	}
	view[nb] = slices.Clone(u.Add)
	cur = append(cur, nb)
	slices.Sort(cur)
	if !slices.Equal(tab.Neighbours(), cur) {
		t.Fatalf("neighbours %v, want %v", tab.Neighbours(), cur)
	}
	return cur
}

func checkUpdatesWellFormed(t *rapid.T, us []Update, neighbours []Iface) {
	for i, u := range us {
		if !slices.Contains(neighbours, u.To) {
			t.Fatalf("update to %d, not a neighbour", u.To)
		}
		if i > 0 && us[i-1].To >= u.To {
			t.Fatalf("updates not one per neighbour in order: %v", us)
		}
	}
}

func checkTable(t *rapid.T, tab *Table, view neighbourView, live []tableSubRec, neighbours []Iface, events []match.Event, minimal bool) {
	for _, nb := range neighbours {
		got := slices.Clone(view[nb])
		slices.SortFunc(got, match.Filter.Compare)
		if want := tab.Forwarded(nb); !slices.EqualFunc(got, want, match.Filter.Equal) {
			t.Fatalf("neighbour %d holds %v, table forwarded %v", nb, got, want)
		}
		for _, e := range events {
			held := slices.ContainsFunc(view[nb], func(f match.Filter) bool { return f.Matches(e) })
			beyond := slices.ContainsFunc(live, func(s tableSubRec) bool { return s.from != nb && s.f.Matches(e) })
			if held != beyond {
				t.Fatalf("event %s to neighbour %d: forwarded %v, a matching subscription from elsewhere %v\n%s", e, nb, held, beyond, tab.Structure())
			}
		}
		others := slices.DeleteFunc(slices.Clone(live), func(s tableSubRec) bool { return s.from == nb })
		fwd := tab.unmerged(nb)
		for _, f := range fwd {
			if !slices.ContainsFunc(others, func(s tableSubRec) bool { return s.f.Equal(f) }) {
				t.Fatalf("filter %s forwarded to %d comes from no other interface", f, nb)
			}
		}
		for _, s := range others {
			if match.Satisfiable(s.f) && !slices.ContainsFunc(fwd, func(f match.Filter) bool { return Covers(f, s.f) }) {
				t.Fatalf("subscription %s from %d is covered by nothing forwarded to %d", s.f, s.from, nb)
			}
		}
		if minimal {
			checkMinimal(t, nb, fwd, others)
		}
	}
	for _, e := range events {
		for _, from := range []Iface{0, 1, 5} {
			var want []Iface
			for _, s := range live {
				if s.from != from && s.f.Matches(e) && !slices.Contains(want, s.from) {
					want = append(want, s.from)
				}
			}
			slices.Sort(want)
			if got := tab.Route(e, from); !slices.Equal(got, want) {
				t.Fatalf("route %s from %d: %v, want %v", e, from, got, want)
			}
		}
	}
}

// checkMinimal checks SIENA's forwarding set in the poset: no forwarded
// filter is strictly covered by a subscription from another interface, and
// no two forwarded filters are equivalent.
func checkMinimal(t *rapid.T, nb Iface, fwd []match.Filter, others []tableSubRec) {
	for i, f := range fwd {
		for _, s := range others {
			if match.Satisfiable(s.f) && Covers(s.f, f) && !Covers(f, s.f) {
				t.Fatalf("filter %s forwarded to %d though %s covers it", f, nb, s.f)
			}
		}
		for _, g := range fwd[i+1:] {
			if Covers(f, g) && Covers(g, f) {
				t.Fatalf("equivalent filters %s and %s both forwarded to %d", f, g, nb)
			}
		}
	}
}

func TestTableErrors(t *testing.T) {
	if _, err := NewTable(TableConfig{Structure: "tree"}); err == nil {
		t.Error("unknown structure accepted")
	}
	if _, err := NewTable(TableConfig{Neighbours: []Iface{1, 1}}); err == nil {
		t.Error("duplicate neighbour accepted")
	}
	tab, _ := NewTable(TableConfig{Neighbours: []Iface{1}})
	if _, err := tab.Unsubscribe(0, match.MustParse("a > 1")); err == nil {
		t.Error("unknown unsubscription accepted")
	}
	if tab.Len() != 0 {
		t.Error("failed unsubscribe changed the table")
	}
}

// TestTableRTOEqualsSubscribe: subscribing through honest RTO placements
// gives the same updates as Subscribe, for both structures, with and
// without merging.
func TestTableRTOEqualsSubscribe(t *testing.T) {
	for _, structure := range []string{"poset", "forest", "poset+merge", "forest+merge"} {
		t.Run(structure, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				s, merge := strings.CutSuffix(structure, "+merge")
				cfg := TableConfig{Structure: s, Neighbours: []Iface{1, 2, 3}, Merge: merge}
				a, _ := NewTable(cfg)
				b, _ := NewTable(cfg)
				var live []tableSubRec
				for range rapid.IntRange(1, 20).Draw(t, "steps") {
					if len(live) > 0 && rapid.IntRange(0, 3).Draw(t, "op") == 0 {
						i := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
						ua, _ := a.Unsubscribe(live[i].from, live[i].f)
						ub, _ := b.Unsubscribe(live[i].from, live[i].f)
						if DescribeUpdates(ua) != DescribeUpdates(ub) {
							t.Fatalf("unsubscribe: %v vs %v", ua, ub)
						}
						live = slices.Delete(live, i, i+1)
						continue
					}
					s := tableSubRec{Iface(rapid.IntRange(0, 3).Draw(t, "from")), genFilter().Draw(t, "f")}
					live = append(live, s)
					ua, err := a.Subscribe(s.from, s.f)
					if err != nil {
						t.Fatal(err)
					}
					p, err := b.StartSubscribeRTO(s.from, s.f, RTOConfig{Policy: Verify, VectorSize: 2})
					if err != nil {
						t.Fatal(err)
					}
					var ub []Update
					if p != nil {
						answerHonestly(t, p)
						if ub, err = b.FinishSubscribeRTO(p); err != nil {
							t.Fatal(err)
						}
					}
					if DescribeUpdates(ua) != DescribeUpdates(ub) {
						t.Fatalf("subscribe %s from %d: %v vs %v", s.f, s.from, ua, ub)
					}
				}
			})
		})
	}
}

// TestTableMergeDeterministic: two merging tables given the same
// operations in the same order return the same updates, and after
// unsubscribing everything forward nothing.
func TestTableMergeDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := TableConfig{Neighbours: []Iface{1, 2}, Merge: true}
		a, _ := NewTable(cfg)
		b, _ := NewTable(cfg)
		gen := rapid.OneOf(genFilter(), genMergeable())
		var live []tableSubRec
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			var ua, ub []Update
			var ea, eb error
			if len(live) > 0 && rapid.IntRange(0, 2).Draw(t, "op") == 0 {
				i := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
				ua, ea = a.Unsubscribe(live[i].from, live[i].f)
				ub, eb = b.Unsubscribe(live[i].from, live[i].f)
				live = slices.Delete(live, i, i+1)
			} else {
				s := tableSubRec{Iface(rapid.IntRange(0, 2).Draw(t, "from")), gen.Draw(t, "f")}
				ua, ea = a.Subscribe(s.from, s.f)
				ub, eb = b.Subscribe(s.from, s.f)
				live = append(live, s)
			}
			if ea != nil || eb != nil {
				t.Fatal(ea, eb)
			}
			if DescribeUpdates(ua) != DescribeUpdates(ub) {
				t.Fatalf("same operations, different updates:\n%s\nvs\n%s", DescribeUpdates(ua), DescribeUpdates(ub))
			}
		}
		for _, s := range live {
			a.Unsubscribe(s.from, s.f)
		}
		for _, nb := range cfg.Neighbours {
			if fs := a.Forwarded(nb); len(fs) != 0 {
				t.Fatalf("neighbour %d still forwarded %v", nb, fs)
			}
		}
	})
}
