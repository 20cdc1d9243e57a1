package poset

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestCoversTransitive checks item 0: the structures' relation is
// transitive (and sound against match.Covers and matching).
func TestCoversTransitive(t *testing.T) {
	events := allEvents()
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := genFilter().Draw(t, "a"), genFilter().Draw(t, "b"), genFilter().Draw(t, "c")
		for _, f := range []match.Filter{a, b, c} {
			if !match.Satisfiable(f) {
				t.Skip("unsatisfiable filters are kept aside by the structures")
			}
		}
		if Covers(a, b) && Covers(b, c) && !Covers(a, c) {
			t.Fatalf("not transitive: %s covers %s covers %s, but not %s", a, b, c, c)
		}
		if Covers(a, b) {
			for _, e := range events {
				if b.Matches(e) && !a.Matches(e) {
					t.Fatalf("unsound: %s covers %s but %s matches only the second", a, b, e)
				}
			}
		}
	})
}

// structureUnderTest abstracts over Poset and Forest for the property tests.
type structureUnderTest struct {
	name  string
	make  func(Config) *core
	check func(*core) error
}

var structures = []structureUnderTest{
	{"poset", func(cfg Config) *core { return NewPoset(cfg).core }, func(c *core) error { return checkPoset(&Poset{c}) }},
	{"forest", func(cfg Config) *core { return NewForest(cfg).core }, func(c *core) error { return checkForest(&Forest{c}) }},
}

// allStructures adds the shallow forest, which takes no RTO or FF, to
// structures for the tests of plain inserts and deletes.
var allStructures = append(structures[:len(structures):len(structures)],
	structureUnderTest{"shallow", func(cfg Config) *core { return NewShallow(cfg).core }, func(c *core) error { return checkShallow(&Shallow{c}) }})

// TestStructuresRandomOps runs random interleavings of inserts and deletes
// and checks, after every operation, the structure's invariants and that
// Match equals Scan. Both the classic algorithms and the candidate index
// (forced on at every size) are exercised.
func TestStructuresRandomOps(t *testing.T) {
	events := allEvents()
	for _, st := range allStructures {
		for _, classic := range []bool{true, false} {
			t.Run(st.name+map[bool]string{true: "/classic", false: "/indexed"}[classic], func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) {
					defer forceKids(t)()
					c := st.make(Config{Classic: classic})
					if !classic {
						forceIndex(c)
					}
					scan := match.NewScan()
					from := map[match.ID]Iface{}
					var live []match.ID
					next := match.ID(0)
					steps := rapid.IntRange(1, 40).Draw(t, "steps")
					for range steps {
						if len(live) == 0 || rapid.IntRange(0, 2).Draw(t, "op") > 0 {
							f := genFilter().Draw(t, "filter")
							iface := Iface(rapid.IntRange(0, 2).Draw(t, "from"))
							if err := c.Add(next, iface, f); err != nil {
								t.Fatal(err)
							}
							scan.Insert(next, f)
							from[next] = iface
							live = append(live, next)
							next++
						} else {
							i := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
							if err := c.Delete(live[i]); err != nil {
								t.Fatal(err)
							}
							scan.Delete(live[i])
							live = slices.Delete(live, i, i+1)
						}
						if err := st.check(c); err != nil {
							t.Fatalf("%v\n%s", err, c)
						}
						if err := checkMatch(c, scan, from, events); err != nil {
							t.Fatalf("%v\n%s", err, c)
						}
						if c.Len() != scan.Len() {
							t.Fatalf("Len %d, scan %d", c.Len(), scan.Len())
						}
					}
					for _, id := range live {
						if err := c.Delete(id); err != nil {
							t.Fatal(err)
						}
					}
					if c.Nodes() != 0 || c.roots.len() != 0 || c.Len() != 0 {
						t.Fatalf("not empty after deleting everything:\n%s", c)
					}
				})
			})
		}
	}
}

// forceIndex makes the structure use its candidate index from the first
// node, so that small random tests exercise it.
func forceIndex(c *core) {
	for _, s := range []*nodeSet{&c.all, &c.roots} {
		if s.indexing {
			s.idx = newCandIndex()
		}
	}
}

func TestAddDeleteErrorsChangeNothing(t *testing.T) {
	for _, st := range structures {
		c := st.make(Config{})
		f := match.MustParse("a > 1")
		if err := c.Add(1, 0, f); err != nil {
			t.Fatal(err)
		}
		before := c.String()
		if err := c.Add(1, 2, match.MustParse("b < 3")); err == nil {
			t.Errorf("%s: duplicate id accepted", st.name)
		}
		if err := c.Delete(7); err == nil {
			t.Errorf("%s: unknown id deleted", st.name)
		}
		if got := c.String(); got != before || c.Len() != 1 {
			t.Errorf("%s: failed operations changed the structure:\n%s", st.name, got)
		}
	}
}

// TestDisjointSound: filters that disjoint says share no event share none
// on the event grid, and disjoint is symmetric.
func TestDisjointSound(t *testing.T) {
	events := allEvents()
	found := 0
	// Disjoint pairs are a minority of random pairs: check rounds of
	// random pairs until some were drawn (a round of 100 may hold none).
	for round := 0; found == 0 && round < 20; round++ {
		checkDisjointSound(t, events, &found)
	}
	if found == 0 {
		t.Fatal("no disjoint pair drawn: the test proves nothing")
	}
}

// checkDisjointSound is one round of TestDisjointSound, counting in found
// the disjoint pairs it drew.
func checkDisjointSound(t *testing.T, events []match.Event, found *int) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genFilter().Draw(t, "a"), genFilter().Draw(t, "b")
		ka, kb := newKey(a), newKey(b)
		if rapid.Bool().Draw(t, "signed") { // as a structure's nodes: the equality fast path
			c := NewPoset(Config{}).core
			ka, kb = c.newNode(a, a.String()).key, c.newNode(b, b.String()).key
		}
		d := disjoint(&ka, &kb)
		if d != disjoint(&kb, &ka) {
			t.Fatalf("disjoint(%s, %s) is not symmetric", a, b)
		}
		// The simple keys' fast path decides exactly as the box walk.
		fa, fb := ka, kb
		fa, fb = boxed(fa), boxed(fb)
		if full := disjoint(&fa, &fb); full != d {
			t.Fatalf("disjoint(%s, %s) = %v, but %v from the boxes", a, b, d, full)
		}
		// mayCover: a necessary condition for covering, and the fast path
		// agrees with the boxes.
		for _, k := range [][2]*key{{&ka, &kb}, {&kb, &ka}} {
			m := mayCover(k[0], k[1])
			if relates(k[0], k[1]) && !m {
				t.Fatalf("%s covers %s but mayCover is false", k[0].f, k[1].f)
			}
			sa, sb := *k[0], *k[1]
			sa, sb = boxed(sa), boxed(sb)
			if full := mayCover(&sa, &sb); full != m {
				t.Fatalf("mayCover(%s, %s) = %v, but %v from the boxes", k[0].f, k[1].f, m, full)
			}
		}
		if !d {
			return
		}
		*found++
		for _, e := range events {
			if a.Matches(e) && b.Matches(e) {
				t.Fatalf("disjoint(%s, %s) but %s matches both", a, b, e)
			}
		}
	})
}

// TestDisjointEqualityFastPath: the signed equality of one attribute is
// never compared with another attribute's.
func TestDisjointEqualityFastPath(t *testing.T) {
	c := NewPoset(Config{}).core
	key := func(text string) key { f := match.MustParse(text); return c.newNode(f, text).key }
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`u == "x"`, `s == "y" && u == "x"`, false},
		{`s == "x"`, `s == "y" && u == "x"`, true},
		{`s == "x" && n > 5`, `s == "x" && n < 3`, true},
		{`s == "x" && n > 5`, `s == "x" && n < 9`, false},
		{`n > 5`, `m < 3`, false},
		{`n > 5 && n < 7`, `s == "y" && n >= 7.5`, true},
		{`s == "x" && s < "z"`, `s == "y"`, true},
	} {
		ka, kb := key(tc.a), key(tc.b)
		if got := disjoint(&ka, &kb); got != tc.want {
			t.Errorf("disjoint(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestMayCoverFastPath: simple keys (one string equality, one numeric
// interval) decide mayCover from their own fields.
func TestMayCoverFastPath(t *testing.T) {
	c := NewPoset(Config{}).core
	key := func(text string) key { f := match.MustParse(text); return c.newNode(f, text).key }
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`s == "x"`, `s == "y"`, false},
		{`s == "x"`, `s == "x" && n > 3`, true},
		{`n > 1`, `n > 2`, true},
		{`n > 2`, `n > 1`, false},
		{`n > 1`, `s == "x"`, false},
		{`s == "x" && n < 5`, `s == "x" && n < 4 && n > 1`, true},
		{`s == "x" && n < 5`, `n < 4 && n > 1`, false},
	} {
		ka, kb := key(tc.a), key(tc.b)
		if !ka.simple || !kb.simple {
			t.Fatalf("%s, %s: not simple keys", tc.a, tc.b)
		}
		if got := mayCover(&ka, &kb); got != tc.want {
			t.Errorf("mayCover(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
