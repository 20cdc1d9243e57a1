package poset

import (
	"maps"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestTableHeldBy: after random subscriptions and unsubscriptions from a
// few interfaces (equal filters, equivalent texts and an unsatisfiable
// filter among them), Count and HeldBy give, per interface, what a
// reference count by canonical text gives, with the filters as subscribed,
// and Len the distinct subscriptions over every interface. (HeldBy reads
// the interface's own subscriptions only: the table keeps them per
// interface.) The structure stays consistent, and its id map holds
// exactly the subscriptions whose filter is not their node's own (the
// others are found by text); some runs hold such subscriptions.
func TestTableHeldBy(t *testing.T) {
	texts := []string{`a == 1`, `a == 1 && b > 2`, `b > 2`, `b > 2 && b > 3`, `a > 5 && a < 2`, `c prefix "x"`, `a == 1 && a == 1`, `a >= 1 && a <= 1`, `b > 3`}
	aside := 0
	for _, structure := range []string{"poset", "forest", "shallow"} {
		rapid.Check(t, func(rt *rapid.T) {
			tb, err := NewTable(TableConfig{Structure: structure, Neighbours: []Iface{1, 2}})
			if err != nil {
				rt.Fatal(err)
			}
			ref := map[Iface]map[string]int{1: {}, 2: {}, 3: {}}
			for range rapid.IntRange(0, 60).Draw(rt, "steps") {
				from := Iface(rapid.IntRange(1, 3).Draw(rt, "from"))
				f := match.MustParse(rapid.SampledFrom(texts).Draw(rt, "filter"))
				if ref[from][f.String()] > 0 && rapid.Bool().Draw(rt, "remove") {
					if _, err := tb.Unsubscribe(from, f); err != nil {
						rt.Fatal(err)
					}
					if ref[from][f.String()]--; ref[from][f.String()] == 0 {
						delete(ref[from], f.String())
					}
				} else {
					if _, err := tb.Subscribe(from, f); err != nil {
						rt.Fatal(err)
					}
					ref[from][f.String()]++
				}
				checkHeldBy(rt, tb, ref)
				aside += checkTableIDs(rt, tb)
			}
		})
	}
	if aside == 0 {
		t.Errorf("no subscription ever held by the node of an equivalent filter of another text: weak test")
	}
}

// checkTableIDs checks the table's structure, and that its id map and
// its map of other filters each hold exactly the subscriptions whose
// filter is not their node's own (by canonical text), the latter with
// that filter; that the table lists every other subscription at its
// node (own) and those, with the ones kept aside, by text (subs). It
// returns how many subscriptions are not their node's own.
func checkTableIDs(rt *rapid.T, tb *Table) int {
	if err := checkCommon(tb.s); err != nil {
		rt.Fatal(err)
	}
	want := 0
	for _, n := range allNodes(tb.s) {
		for e := range n.subs {
			if f := tb.s.entryFilter(n, e); f.String() != n.text {
				want++
				if tb.s.byID[e.id] != n || !tb.s.others[e.id].Equal(f) {
					rt.Fatalf("subscription %d (%s) of node %s: not in the id map, or not with its filter", e.id, f, n.text)
				}
			}
		}
	}
	if len(tb.s.byID) != want || len(tb.s.others) != want {
		rt.Fatalf("the id map holds %d subscriptions and the filters %d, want the %d whose filter is not their node's", len(tb.s.byID), len(tb.s.others), want)
	}
	own, byText := 0, 0
	for from, nodes := range tb.own {
		for n := range nodes.all {
			if _, ok := tb.s.ownEntry(n, from); !ok || tb.s.byText.get(n.text) != n {
				rt.Fatalf("interface %d is listed at node %s, which holds no subscription of its own text from it", from, n.text)
			}
			own++
		}
	}
	for _, m := range tb.subs {
		byText += len(m)
	}
	if own+want != tb.s.Len()-len(tb.s.void) || byText != want+len(tb.s.void) {
		rt.Fatalf("the table lists %d subscriptions at their nodes and %d by text, want %d and %d",
			own, byText, tb.s.Len()-len(tb.s.void)-want, want+len(tb.s.void))
	}
	return want
}

func checkHeldBy(rt *rapid.T, tb *Table, ref map[Iface]map[string]int) {
	total := 0
	for _, want := range ref {
		total += len(want)
	}
	if tb.Len() != total {
		rt.Fatalf("Len = %d, want %d distinct subscriptions", tb.Len(), total)
	}
	for from, want := range ref {
		got := map[string]int{}
		var order []string
		for _, h := range tb.HeldBy(from) {
			if h.Filter.String() != h.Text || h.N <= 0 {
				rt.Fatalf("interface %d: held %q as filter %s with count %d", from, h.Text, h.Filter, h.N)
			}
			got[h.Text] = h.N
			order = append(order, h.Text)
		}
		if !maps.Equal(got, want) || !slices.IsSorted(order) {
			rt.Fatalf("interface %d holds %v (in order %q), want %v", from, got, order, want)
		}
		for text := range want {
			if n := tb.Count(from, match.MustParse(text)); n != want[text] {
				rt.Fatalf("interface %d: Count(%s) = %d, want %d", from, text, n, want[text])
			}
		}
	}
}
