package poset

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// stringFilters returns every filter of one or two constraints on the
// string attribute s over a few values: equalities, prefixes that nest
// and contradict them, ordering comparisons that narrow a prefix to one
// string (s prefix "x" && s <= "x" is s == "x"), != and exists.
func stringFilters() []match.Filter {
	var cs []match.Constraint
	for _, op := range []match.Op{match.OpEq, match.OpPrefix, match.OpLe, match.OpGe, match.OpLt, match.OpGt, match.OpNe} {
		for _, v := range []string{"", "x", "xy", "y"} {
			cs = append(cs, match.Constraint{Attr: "s", Op: op, Val: match.Str(v)})
		}
	}
	cs = append(cs, match.Constraint{Attr: "s", Op: match.OpExists})
	var fs []match.Filter
	for i, c := range cs {
		fs = append(fs, match.MustFilter(c))
		for _, d := range cs[i+1:] {
			fs = append(fs, match.MustFilter(c, d))
		}
	}
	return fs
}

// TestBoxContainsNecessary: the box test is a necessary condition for
// covering: whenever match.Covers(a, b) holds for satisfiable filters of
// the complete fragment, boxContains(box(a), box(b)) does too (so relates
// agrees with match.Covers there, and the candidate index, which prunes
// with it, misses no coverer). Every pair of stringFilters, then random
// pairs of the structures' generator.
func TestBoxContainsNecessary(t *testing.T) {
	check := func(a, b match.Filter) (string, bool) {
		if !match.Satisfiable(a) || !match.Satisfiable(b) || !inCompleteFragment(a) || !inCompleteFragment(b) {
			return "", true // the box is only read for these
		}
		if match.Covers(a, b) && !boxContains(boxOf(a), boxOf(b)) {
			return fmt.Sprintf("%s covers %s, but the box test says it cannot", a, b), false
		}
		return "", true
	}
	fs := stringFilters()
	for _, a := range fs {
		for _, b := range fs {
			if msg, ok := check(a, b); !ok {
				t.Fatal(msg)
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		if msg, ok := check(genFilter().Draw(t, "a"), genFilter().Draw(t, "b")); !ok {
			t.Fatal(msg)
		}
	})
}

// TestBoxContainsStrings: the box test tells equalities and prefixes
// apart, and leaves a prefix narrowed by an ordering comparison alone.
func TestBoxContainsStrings(t *testing.T) {
	for _, tc := range []struct {
		outer, inner string
		want         bool
	}{
		{`s == "IBM"`, `s prefix "BA"`, false},
		{`s prefix "BA"`, `s == "IBM"`, false},
		{`s prefix "BA"`, `s == "BAC"`, true},
		{`s prefix "B"`, `s prefix "BA"`, true},
		{`s prefix "BA"`, `s prefix "B"`, false},
		{`s prefix "BA"`, `s prefix "B" && s prefix "BAX"`, true},
		{`s == "BA"`, `s prefix "BA" && s <= "BA"`, true},
		{`s prefix "BC"`, `s prefix "B" && s >= "BC"`, true}, // an ordering comparison: no conclusion
		{`s == "BA"`, `s prefix "BA" && s != "BAC"`, false},
		{`s == "x" && v > 1`, `s prefix "x" && v > 2`, false},
		{`s prefix "x" && v > 1`, `s == "xy" && v > 2`, true},
		{`s exists`, `s prefix "x"`, true},
		{`s prefix "x"`, `s exists`, true}, // the box keeps no exists: no conclusion
	} {
		got := boxContains(boxOf(match.MustParse(tc.outer)), boxOf(match.MustParse(tc.inner)))
		if got != tc.want {
			t.Errorf("boxContains(%s, %s) = %v, want %v", tc.outer, tc.inner, got, tc.want)
		}
	}
}

// TestCandIndexFindsEveryRelative: the candidate index returns, for every
// query filter, every member that covers it (coverers) and every member
// it covers (covered), over stringFilters beside numeric and equality
// filters on the same attributes (so the groups have equality buckets
// and plain members, and prefixes meet equalities in both directions).
func TestCandIndexFindsEveryRelative(t *testing.T) {
	fs := stringFilters()
	for _, text := range []string{`s == "x" && a < 2`, `s prefix "x" && a < 3`, `s == "xy" && a < 1`, `a == 1`, `a == 1 && s == "x"`, `a < 2`} {
		fs = append(fs, match.MustParse(text))
	}
	c := NewShallow(Config{}).core
	x := newCandIndex()
	var nodes []*node
	for _, f := range fs {
		if !match.Satisfiable(f) {
			continue
		}
		n := c.newNode(f, f.String())
		x.add(n)
		nodes = append(nodes, n)
	}
	for _, u := range nodes {
		up, down := map[*node]bool{}, map[*node]bool{}
		for _, w := range x.coverers(u, nil) {
			up[w] = true
		}
		for _, w := range x.covered(u, nil) {
			down[w] = true
		}
		for _, w := range nodes {
			if relates(&w.key, &u.key) && !up[w] {
				t.Errorf("coverers of %s miss %s", u.text, w.text)
			}
			if relates(&u.key, &w.key) && !down[w] {
				t.Errorf("covered of %s miss %s", u.text, w.text)
			}
		}
	}
}

// TestBoxContainsRoundedBounds: covering that holds only because no
// value an event carries lies between two bounds (a strict bound against
// the float below it, integers past 2^53 that round to another float,
// != constraints removing the values between) passes the box test and
// the simple keys' fast path, so relates agrees with match.Covers; bounds
// that do admit values between them still fail it. (Before spans held
// their filter's number hull, TestFastPathsOnEdgeValues found the 2^53
// case after ~10,000 cases.)
func TestBoxContainsRoundedBounds(t *testing.T) {
	below5 := strconv.FormatFloat(math.Nextafter(5, 0), 'g', -1, 64)
	below5twice := strconv.FormatFloat(math.Nextafter(math.Nextafter(5, 0), 0), 'g', -1, 64)
	for _, tc := range []struct {
		outer, inner string
		covers       bool
	}{
		{`x <= ` + below5, `x < 5`, true},
		{`x >= 5.000000000000001`, `x > 5`, true},
		{`x <= 9007199254740993`, `x < 9007199254740994`, true},
		{`x >= 9007199254740993`, `x > 9007199254740992`, true},
		{`x <= 9007199254740993`, `a == 1 && x < 9007199254740994`, true},
		{`x <= ` + below5twice, `x <= 5 && x != 5 && x != ` + below5, true},
		{`x <= ` + below5twice, `x < 5 && x != 5`, false},
		{`x <= 4`, `x < 5`, false},
		{`x >= 6`, `x > 5`, false},
	} {
		a, b := match.MustParse(tc.outer), match.MustParse(tc.inner)
		if match.Covers(a, b) != tc.covers {
			t.Fatalf("match.Covers(%s, %s) = %v, the test expects %v", a, b, !tc.covers, tc.covers)
		}
		c := NewPoset(Config{}).core
		ka, kb := c.newNode(a, a.String()).key, c.newNode(b, b.String()).key
		fa, fb := ka, kb
		fa, fb = boxed(fa), boxed(fb)
		if got, box := mayCover(&ka, &kb), mayCover(&fa, &fb); got != box || tc.covers && !got {
			t.Errorf("mayCover(%s, %s) = %v, by the boxes %v; covering %v", a, b, got, box, tc.covers)
		}
		if got := relates(&ka, &kb); got != tc.covers {
			t.Errorf("relates(%s, %s) = %v, want %v", a, b, got, tc.covers)
		}
	}
}

// TestSimpleKeySpans: a structure's key keeps no box when it is simple,
// and the spans it rebuilds from its fields and filter are boxOf's, for
// random filters (numeric, string and boolean constraints on a few
// attributes) and for filters of one string equality and one numeric
// interval, the simple keys' usual shape; some of each are simple.
func TestSimpleKeySpans(t *testing.T) {
	simple := 0
	check := func(t *rapid.T, f match.Filter) {
		c := NewShallow(Config{}).core
		k := c.newNode(f, f.String()).key
		if k.simple {
			simple++
			if k.boxp != nil || k.nbox != 0 {
				t.Fatalf("%s: a simple key keeps its box", f)
			}
		}
		var buf [2]span
		if got, want := k.spans(&buf), boxOf(f); k.exact && !k.empty && !slices.Equal(got, want) {
			t.Fatalf("%s: spans %+v, boxOf %+v", f, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) { check(t, genFilter().Draw(t, "f")) })
	rapid.Check(t, func(t *rapid.T) {
		text := fmt.Sprintf(`s == %q && a %s %d`, rapid.SampledFrom([]string{"x", "y", ""}).Draw(t, "s"),
			rapid.SampledFrom([]string{"<", "<=", ">", ">=", "==", "!="}).Draw(t, "op"), rapid.IntRange(-3, 3).Draw(t, "v"))
		if rapid.Bool().Draw(t, "range") {
			text += ` && a > -9 && s >= ""`
		}
		check(t, match.MustParse(text))
	})
	if simple == 0 {
		t.Fatal("no simple key drawn: the test proves nothing")
	}
}
