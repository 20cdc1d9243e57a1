package mesh

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestMeshProperty drives 2-6 routers through random link changes (some
// refused because they would close a cycle, some racing past the check),
// subscriptions, unsubscriptions and partial message delivery. Whenever a
// subscription becomes ready with the topology unchanged since it was made
// (and no racing cycle waiting to be broken), every matching
// event published anywhere in its component reaches it; whenever no
// message is in flight, the links form a forest, every subscription is
// ready, every event reaches exactly the matching subscriptions once; and
// after unsubscribing everything every table is empty. Routers also
// restart (a new incarnation): their peers' links to the old run go stale
// until a link from the new run replaces them or, before each quiet
// check, they time out.
func TestMeshProperty(t *testing.T) {
	for _, table := range []string{"poset", "forest", "poset+merge", "forest+merge"} {
		t.Run(table, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { runMeshProperty(rt, table) })
		})
	}
}

func runMeshProperty(rt *rapid.T, table string) {
	names := drawRouterNames(rt)
	n := len(names)
	s := newPartsSim(rt, names, table)
	nextClient := Client(1)
	for range rapid.IntRange(1, 60).Draw(rt, "ops") {
		switch rapid.IntRange(0, 10).Draw(rt, "op") {
		case 0, 1:
			i, j := rapid.IntRange(0, n-1).Draw(rt, "a"), rapid.IntRange(0, n-1).Draw(rt, "b")
			if i != j {
				_ = s.connect(i, j) // refusals are expected; checkQuiet proves no cycle stays
			}
		case 2:
			if len(s.conns) > 0 {
				s.disconnect(rapid.SampledFrom(s.conns).Draw(rt, "conn"))
			}
		case 3, 4, 5:
			k := subKey{rapid.IntRange(0, n-1).Draw(rt, "router"), nextClient, 1}
			nextClient++
			s.subscribe(k, genFilter(rt))
		case 6:
			if len(s.subs) > 0 {
				k := rapid.SampledFrom(sortedSubs(s.subs)).Draw(rt, "unsub")
				s.unsubscribe(k)
				if rapid.Bool().Draw(rt, "reuse ref") { // a late Ready of the old one would be early for this one
					s.subscribe(k, genFilter(rt))
				}
			}
		case 7, 8:
			s.deliverSome(rt)
		case 9:
			s.settle()
		case 10:
			s.restart(rapid.IntRange(0, n-1).Draw(rt, "restart"))
		}
	}
	s.settle()
	for _, k := range sortedSubs(s.subs) {
		s.unsubscribe(k)
	}
	s.settle()
}

// drawRouterNames draws 2-6 routers, named r0, r1, ...
func drawRouterNames(rt *rapid.T) []string {
	names := make([]string, rapid.IntRange(2, 6).Draw(rt, "routers"))
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i)
	}
	return names
}

// deliverSome delivers 1-10 queued messages, each from a drawn queue,
// stopping early when nothing is queued.
func (s *sim) deliverSome(rt *rapid.T) {
	for range rapid.IntRange(1, 10).Draw(rt, "steps") {
		q := s.queued()
		if len(q) == 0 {
			break
		}
		p := rapid.SampledFrom(q).Draw(rt, "queue")
		s.deliver(s.conns[p[0]], p[1])
	}
}

func sortedSubs(m map[subKey]match.Filter) []subKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b subKey) int {
		if a.router != b.router {
			return a.router - b.router
		}
		return int(a.client) - int(b.client)
	})
}

// genFilter draws a filter over the grid's attributes, from a small set of
// constraints so that covering is frequent.
func genFilter(t *rapid.T) match.Filter {
	atoms := []string{`x < 3`, `x < 6`, `x > 2`, `x >= 5`, `x == 4`, `x exists`,
		`s == "a"`, `s == "b"`, `s prefix "a"`, `s != "c"`}
	cs := rapid.SliceOfNDistinct(rapid.SampledFrom(atoms), 1, 2, rapid.ID[string]).Draw(t, "filter")
	text := cs[0]
	if len(cs) > 1 {
		text += " && " + cs[1]
	}
	return match.MustParse(text)
}
