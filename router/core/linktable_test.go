package core

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// linkTableModel is what a link table must hold: per link, the multiset of
// filters (canonical text) its Routes installed.
type linkTableModel map[ifaceID][]string

// want returns the links other than from holding a filter ev matches.
func (m linkTableModel) want(from ifaceID, ev match.Event) []ifaceID {
	var out []ifaceID
	for id, texts := range m {
		if id == from {
			continue
		}
		if slices.ContainsFunc(texts, func(s string) bool { return match.MustParse(s).Matches(ev) }) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// TestLinkTableWitness checks route against the filters each link holds,
// through random snapshots, incremental Routes (with duplicate filters)
// and drops: without a witness and with an honest one (a filter a link
// holds that the event matches) and with a false one (a held filter the
// event does not match) it returns exactly the links whose filters match,
// each with an honest witness for the next router. The key attribute's
// values come as ints and as Compare-equal floats (different cache keys). Events repeat, so the cache of filters that
// matched events alike decides some of them, exactly too. After every link
// is dropped, no witness, equality count or cache entry is left. The
// same holds when witnesses collide (the table's witness forced to three
// values): a witness then names several filters, each tried.
func TestLinkTableWitness(t *testing.T) {
	t.Run("witness=FilterHash", func(t *testing.T) { testLinkTableWitness(t, wire.FilterHash, false) })
	colliding := func(s string) uint64 { return wire.FilterHash(s)%3 + 1 }
	t.Run("witness=colliding", func(t *testing.T) { testLinkTableWitness(t, colliding, true) })
}

func testLinkTableWitness(t *testing.T, witness func(string) uint64, collide bool) {
	filters := []string{`a == 1`, `a > 0`, `b prefix "x"`, `a exists && b == "xy"`, `*`, `a < 3 && a != 2`, `a >= 1`, `b == "x" && a > 1`}
	var decided [NumDecisions]int
	rapid.Check(t, func(t *rapid.T) {
		lt := NewLinkTable()
		lt.pool.hashFn = func(f match.Filter) uint64 { return witness(f.String()) }
		model := linkTableModel{}
		links := rapid.IntRange(1, 4).Draw(t, "links")
		for range rapid.IntRange(1, 50).Draw(t, "steps") {
			id := ifaceID(rapid.IntRange(1, links).Draw(t, "link"))
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0: // snapshot
				add := rapid.SliceOfN(rapid.SampledFrom(filters), 0, 4).Draw(t, "snapshot")
				mustApply(t, lt, id, &wire.Routes{Snapshot: true, Add: add})
				model[id] = canonical(add)
			case 1: // incremental
				var remove []string
				if held := model[id]; len(held) > 0 {
					remove = []string{rapid.SampledFrom(held).Draw(t, "remove")}
				}
				add := rapid.SliceOfN(rapid.SampledFrom(filters), 0, 2).Draw(t, "add")
				mustApply(t, lt, id, &wire.Routes{Remove: remove, Add: add})
				if len(remove) > 0 {
					i := slices.Index(model[id], remove[0])
					model[id] = slices.Delete(model[id], i, i+1)
				}
				model[id] = append(model[id], canonical(add)...)
			case 2:
				if rapid.IntRange(0, 4).Draw(t, "rare") == 0 {
					lt.Drop(id)
					delete(model, id)
				}
			case 3:
				checkLinkHeld(t, lt, model)
			default:
				a := rapid.Int64Range(-1, 4).Draw(t, "a")
				av := match.Int(a)
				if rapid.Bool().Draw(t, "float a") { // Compare-equal to Int(a), another cache key
					av = match.MustFloat(float64(a))
				}
				ev := match.MustEvent(
					match.Attr{Name: "a", Value: av},
					match.Attr{Name: "b", Value: match.Str(rapid.SampledFrom([]string{"x", "xy", "y"}).Draw(t, "b"))})
				from := ifaceID(rapid.IntRange(0, links).Draw(t, "from")) // 0: a client
				checkLinkRoute(t, lt, model, from, ev, &decided, witness, collide)
			}
		}
		checkLinkHeld(t, lt, model)
		for id := range model {
			lt.Drop(id)
		}
		if lt.pool.len() != 0 || lt.pool.byHash.len() != 0 || len(lt.pool.collided) != 0 || len(lt.repeats) != 0 || len(lt.more) != 0 || len(lt.links) != 0 || len(lt.pos) != 0 || lt.idx.Len() != 0 || len(lt.cache.byLink) != 0 || lt.cache.filters != 0 || len(lt.cache.keyed) != 0 {
			t.Fatalf("after dropping every link: %d pooled filters, %d witnesses, %d collided, %d repeats, holders %v, links %v, positions %v, %d index entries, keyed attributes %v, %d cached links",
				lt.pool.len(), lt.pool.byHash.len(), len(lt.pool.collided), len(lt.repeats), lt.more, lt.links, lt.pos, lt.idx.Len(), lt.cache.keyed, len(lt.cache.byLink))
		}
	})
	for d, what := range [...]string{DecidedByIndex: "index", DecidedByWitness: "witness", DecidedByCache: "cache"} {
		if decided[d] == 0 {
			t.Errorf("no event was decided by %s: weak test (%v)", what, decided)
		}
	}
}

// checkLinkHeld checks that each link holds exactly its filters of the
// model, with multiplicity, each under its own witness (Witnessed), that
// the table counts each distinct filter of each link once (Len), and
// that the index holds each distinct filter once, however many links hold
// it.
func checkLinkHeld(t *rapid.T, lt *LinkTable, model linkTableModel) {
	distinct, perLink := map[string]bool{}, 0
	for id, texts := range model {
		var got []string
		for w, fs := range lt.Witnessed(id) {
			for _, f := range fs {
				if lt.pool.hashFn(f) != w {
					t.Fatalf("link %d holds %s under witness %x, not its own", id, f, w)
				}
				got = append(got, f.String())
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(texts))
		if !slices.Equal(got, want) {
			t.Fatalf("link %d holds %q, want %q", id, got, want)
		}
		held := slices.Compact(want)
		perLink += len(held)
		for _, s := range held {
			distinct[s] = true
		}
	}
	if lt.Len() != perLink || lt.idx.Len() != len(distinct) || lt.pool.len() != len(distinct) {
		t.Fatalf("the table holds %d filters per link, %d index entries and %d pooled filters, want %d, %d and %d (model %v)",
			lt.Len(), lt.idx.Len(), lt.pool.len(), perLink, len(distinct), len(distinct), model)
	}
}

func mustApply(t *rapid.T, lt *LinkTable, id ifaceID, r *wire.Routes) {
	if err := lt.Apply(id, r); err != nil {
		t.Fatalf("apply %+v to %d: %v", r, id, err)
	}
}

func canonical(texts []string) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		out[i] = match.MustParse(s).String()
	}
	return out
}

// checkLinkRoute checks routing ev from without a witness, with an honest
// one and with a false one, counting what decided each in decided.
// witness is the table's; when witnesses collide, a witness naming a
// filter some onward link lacks may still decide, through another filter
// of that witness that every onward link holds and ev matches.
func checkLinkRoute(t *rapid.T, lt *LinkTable, model linkTableModel, from ifaceID, ev match.Event, decided *[NumDecisions]int, witness func(string) uint64, collide bool) {
	want := model.want(from, ev)
	var matching, failing []string
	for _, texts := range model {
		for _, s := range texts {
			if match.MustParse(s).Matches(ev) {
				matching = append(matching, s)
			} else {
				failing = append(failing, s)
			}
		}
	}
	slices.Sort(matching)
	slices.Sort(failing)
	hits, first := lt.Route(from, ev, 0)
	decided[first]++
	checkHits(t, "no witness", model, ev, hits, want, witness)
	if first == DecidedByWitness {
		t.Fatalf("no witness: decided by witness")
	}
	if len(matching) > 0 {
		w := rapid.SampledFrom(matching).Draw(t, "honest witness")
		hits, decision := lt.Route(from, ev, witness(w))
		decided[decision]++
		checkHits(t, "honest witness "+w, model, ev, hits, want, witness)
		resolved, onward := true, 0
		for id, texts := range model {
			if id != from && len(texts) > 0 {
				onward++
				resolved = resolved && slices.Contains(texts, w)
			}
		}
		if got := decision == DecidedByWitness; onward > 0 && got != resolved && (!collide || resolved) || onward == 0 && decision != DecidedNoLinks {
			t.Fatalf("honest witness %s from %d: decision %d, want by witness %v (%d onward links; model %v)", w, from, decision, resolved, onward, model)
		}
	}
	if len(failing) > 0 {
		// A false witness (a neighbour's bug) is caught: the answer is
		// exact, and the next router gets an honest witness, so a false one
		// never travels on.
		w := rapid.SampledFrom(failing).Draw(t, "false witness")
		hits, decision := lt.Route(from, ev, witness(w))
		decided[decision]++
		checkHits(t, "false witness "+w, model, ev, hits, want, witness)
		if decision == DecidedByWitness && !collide {
			t.Fatalf("false witness %s decided", w)
		}
	}
}

// checkHits compares the links of hits with want, and checks that each
// hit's witness names a filter its link holds that ev matches.
func checkHits(t *rapid.T, what string, model linkTableModel, ev match.Event, hits []LinkHit, want []ifaceID, witness func(string) uint64) {
	var got []ifaceID
	for _, h := range hits {
		got = append(got, h.Link)
		honest := slices.ContainsFunc(model[h.Link], func(s string) bool {
			return witness(s) == h.Witness && match.MustParse(s).Matches(ev)
		})
		if !honest {
			t.Fatalf("%s: link %d gets witness %x, not a filter it holds that %v matches (%v)", what, h.Link, h.Witness, ev, model[h.Link])
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: event %v: links %v, want %v (model %v)", what, ev, got, want, model)
	}
}

// TestLinkTableFailedApply: a Routes message the link table refuses
// halfway (the loop then closes the link and drops it) leaves witnesses,
// equality counts and cache consistent with what it did install: routing
// stays exact, and dropping the link leaves nothing behind.
func TestLinkTableFailedApply(t *testing.T) {
	lt := NewLinkTable()
	for id, add := range map[ifaceID][]string{1: {`a == 1`, `b == "x"`, `a == 1`}, 2: {`a == 1`}} {
		if err := lt.Apply(id, &wire.Routes{Snapshot: true, Add: add}); err != nil {
			t.Fatal(err)
		}
	}
	ev := match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)}, match.Attr{Name: "b", Value: match.Str("x")})
	lt.Route(0, ev, 0) // fills the cache
	err := lt.Apply(1, &wire.Routes{Remove: []string{`a == 1`, `b == "x"`, `b == "x"`}, Add: []string{`a == 2`}})
	if err == nil {
		t.Fatal("removing a filter twice that was held once: no error")
	}
	// Link 1 now holds one a == 1: the witness of a == 1 still names both links.
	if hits, d := lt.Route(0, ev, wire.FilterHash(`a == 1`)); d != DecidedByWitness || len(hits) != 2 {
		t.Fatalf("after the failed apply: %v decided by %d, want links 1 and 2 by witness", hits, d)
	}
	noB := match.MustEvent(match.Attr{Name: "b", Value: match.Str("x")})
	if hits, _ := lt.Route(0, noB, wire.FilterHash(`b == "x"`)); len(hits) != 0 {
		t.Fatalf("b == \"x\" was removed from link 1 before the error: still routed to %v", hits)
	}
	lt.Drop(1)
	lt.Drop(2)
	if lt.pool.len() != 0 || lt.pool.byHash.len() != 0 || len(lt.pool.collided) != 0 || len(lt.repeats) != 0 || len(lt.links) != 0 || len(lt.cache.keyed) != 0 || len(lt.cache.byLink) != 0 || len(lt.pos) != 0 || lt.idx.Len() != 0 {
		t.Fatalf("after dropping both links: %d pooled filters, %d witnesses, %d collided, %d repeats, links %v, equalities %v, %d cached links, %d link positions",
			lt.pool.len(), lt.pool.byHash.len(), len(lt.pool.collided), len(lt.repeats), lt.links, lt.cache.keyed, len(lt.cache.byLink), len(lt.pos))
	}
}

// TestLinkTableCompactsOnWitnessedEvents: events the witness (or the
// cache) decides count toward compacting the link table's index, as
// matched ones do, so an inner router whose witness decides nearly every
// event still compacts once its filters are stable.
func TestLinkTableCompactsOnWitnessedEvents(t *testing.T) {
	lt := NewLinkTable()
	var add []string
	for i := range 600 {
		add = append(add, fmt.Sprintf(`symbol == "S%d" && price > %d`, i%50, i))
	}
	if err := lt.Apply(1, &wire.Routes{Snapshot: true, Add: add}); err != nil {
		t.Fatal(err)
	}
	ev := match.MustEvent(match.Attr{Name: "price", Value: match.Int(1000)}, match.Attr{Name: "symbol", Value: match.Str("S7")})
	witness := wire.FilterHash(match.MustParse(add[7]).String())
	for i := range compactAfter(len(add)) {
		if !lt.changed {
			t.Fatalf("compacted after %d events, want %d", i, compactAfter(len(add)))
		}
		if _, d := lt.Route(2, ev, witness); d != DecidedByWitness {
			t.Fatalf("event %d: decided by %d, want the witness", i, d)
		}
	}
	if lt.changed {
		t.Fatalf("not compacted after %d witnessed events", compactAfter(len(add)))
	}
}

// TestLinkTableRepeats: copies of one filter a link holds, and the links
// holding one filter, share one index entry (an entry each would be
// wasted), yet count one by one: the link wants the filter's events until
// its last copy is removed, Witnessed lists every copy, and a drop leaves
// nothing.
func TestLinkTableRepeats(t *testing.T) {
	lt := NewLinkTable()
	mustApplyT(t, lt, 1, &wire.Routes{Snapshot: true, Add: []string{`a == 1`, `a == 1`, `a == 1`, `b == "x"`}})
	mustApplyT(t, lt, 2, &wire.Routes{Snapshot: true, Add: []string{`a == 1`}})
	if n, x := lt.Len(), lt.idx.Len(); n != 3 || x != 2 {
		t.Fatalf("%d filters held and %d index entries, want 3 (a == 1 on each link, b == \"x\" on link 1) and 2 (a == 1 once)", n, x)
	}
	w := wire.FilterHash(`a == 1`)
	if got := len(lt.Witnessed(1)[w]); got != 3 {
		t.Fatalf("link 1 lists %d copies of a == 1, want 3", got)
	}
	ev := match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)})
	route := func() []ifaceID {
		var out []ifaceID
		hits, _ := lt.Route(0, ev, 0)
		for _, h := range hits {
			out = append(out, h.Link)
		}
		return out
	}
	for i, want := range [][]ifaceID{{1, 2}, {1, 2}, {2}} {
		mustApplyT(t, lt, 1, &wire.Routes{Remove: []string{`a == 1`}})
		if got := route(); !slices.Equal(got, want) {
			t.Fatalf("after removing %d copies from link 1: routed to %v, want %v", i+1, got, want)
		}
	}
	if err := lt.Apply(1, &wire.Routes{Remove: []string{`a == 1`}}); err == nil {
		t.Fatal("removing a fourth copy of a == 1 from link 1: no error")
	}
	mustApplyT(t, lt, 2, &wire.Routes{Add: []string{`a == 1`, `a == 1`}})
	lt.Drop(1)
	lt.Drop(2)
	if lt.pool.len() != 0 || len(lt.repeats) != 0 || len(lt.more) != 0 || len(lt.cache.keyed) != 0 || lt.Len() != 0 || lt.idx.Len() != 0 {
		t.Fatalf("after dropping both links: %d pooled filters, repeats %v, holders %v, equalities %v, %d held, %d index entries", lt.pool.len(), lt.repeats, lt.more, lt.cache.keyed, lt.Len(), lt.idx.Len())
	}
}

func mustApplyT(t *testing.T, lt *LinkTable, id ifaceID, r *wire.Routes) {
	t.Helper()
	if err := lt.Apply(id, r); err != nil {
		t.Fatalf("apply %+v to %d: %v", r, id, err)
	}
}

// TestLinkTableKeyExcludes checks the link cache's negative answer
// against the filters each link holds: with filters that all have an
// equality on the key (string values, an int one, two on one attribute,
// repeats), and sometimes one that has none, routing returns exactly the
// links whose filters match, for events whose key is a subscribed string,
// an unsubscribed one, a number or missing. Some events are excluded by
// the key and some are not. After every link is dropped, nothing is
// counted. The same holds when the values' hashes collide (the cache's
// value hash forced to one value for the one-letter values): a value then
// stands for every value of its hash, and is excluded only when none is
// named.
func TestLinkTableKeyExcludes(t *testing.T) {
	t.Run("hash=maphash", func(t *testing.T) { testLinkTableKeyExcludes(t, nil) })
	colliding := func(s string) uint32 { return uint32(len(s)) }
	t.Run("hash=colliding", func(t *testing.T) { testLinkTableKeyExcludes(t, colliding) })
}

func testLinkTableKeyExcludes(t *testing.T, valueHash func(string) uint32) {
	keyed := []string{`b == "x"`, `b == "x" && a > 1`, `b == "y" && a exists`, `b == 2`, `b == "x" && b == "y"`, `b == "z" && c == "x"`}
	open := []string{`a > 0`, `c == "x"`}
	excluded, routed := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		lt := NewLinkTable()
		if valueHash != nil {
			lt.cache.testHash = valueHash
		}
		model := linkTableModel{}
		links := rapid.IntRange(1, 3).Draw(t, "links")
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			id := ifaceID(rapid.IntRange(1, links).Draw(t, "link"))
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				add := rapid.SliceOfN(rapid.SampledFrom(keyed), 0, 4).Draw(t, "snapshot")
				if rapid.IntRange(0, 5).Draw(t, "open") == 0 {
					add = append(add, rapid.SampledFrom(open).Draw(t, "unkeyed"))
				}
				mustApply(t, lt, id, &wire.Routes{Snapshot: true, Add: add})
				model[id] = canonical(add)
			case 1:
				if rapid.IntRange(0, 3).Draw(t, "rare") == 0 {
					lt.Drop(id)
					delete(model, id)
				}
			default:
				attrs := []match.Attr{{Name: "a", Value: match.Int(rapid.Int64Range(0, 3).Draw(t, "a"))}}
				switch rapid.IntRange(0, 3).Draw(t, "b kind") {
				case 0:
					attrs = append(attrs, match.Attr{Name: "b", Value: match.Str(rapid.SampledFrom([]string{"x", "y", "z", "w"}).Draw(t, "b"))})
				case 1:
					attrs = append(attrs, match.Attr{Name: "b", Value: match.MustFloat(2)})
				case 2:
					attrs = append(attrs, match.Attr{Name: "b", Value: match.Int(rapid.Int64Range(1, 3).Draw(t, "b int"))})
				}
				attrs = append(attrs, match.Attr{Name: "c", Value: match.Str("x")})
				ev := match.MustEvent(attrs...)
				from := ifaceID(rapid.IntRange(0, links).Draw(t, "from"))
				key := lt.cache.keyOf(ev)
				if lt.cache.excludes(&key) {
					excluded++
				} else {
					routed++
				}
				hits, _ := lt.Route(from, ev, 0)
				var got []ifaceID
				for _, h := range hits {
					got = append(got, h.Link)
				}
				if want := model.want(from, ev); !slices.Equal(got, want) {
					t.Fatalf("route %v from %d: links %v, want %v (model %v)", ev, from, got, want, model)
				}
			}
		}
		for id := range model {
			lt.Drop(id)
		}
		if lt.cache.filters != 0 || len(lt.cache.keyed) != 0 {
			t.Fatalf("after dropping every link: %d filters, keyed %v", lt.cache.filters, lt.cache.keyed)
		}
	})
	if excluded == 0 || routed == 0 {
		t.Errorf("events excluded by the key %d, not %d: weak test", excluded, routed)
	}
}
