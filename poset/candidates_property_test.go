package poset

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// genPointFilter draws a filter of up to four constraints over a few
// attributes, most of them points (string and numeric equalities, a
// numeric span closed on one value), some prefixes, ranges and exists,
// so that candidate-index groups hold members with several point
// attributes in every combination.
func genPointFilter() *rapid.Generator[match.Filter] {
	return rapid.Custom(func(t *rapid.T) match.Filter {
		var cs []match.Constraint
		for range rapid.IntRange(1, 4).Draw(t, "n") {
			attr := rapid.SampledFrom([]string{"a", "b", "s", "u"}).Draw(t, "attr")
			switch rapid.IntRange(0, 7).Draw(t, "kind") {
			case 0, 1:
				cs = append(cs, match.Constraint{Attr: attr, Op: match.OpEq, Val: match.Str(rapid.SampledFrom([]string{"", "x", "xy", "y"}).Draw(t, "s"))})
			case 2:
				cs = append(cs, match.Constraint{Attr: attr, Op: match.OpEq, Val: match.Int(int64(rapid.IntRange(0, 2).Draw(t, "i")))})
			case 3:
				v := match.Int(int64(rapid.IntRange(0, 2).Draw(t, "p")))
				cs = append(cs, match.Constraint{Attr: attr, Op: match.OpGe, Val: v}, match.Constraint{Attr: attr, Op: match.OpLe, Val: v})
			case 4:
				cs = append(cs, match.Constraint{Attr: attr, Op: match.OpPrefix, Val: match.Str(rapid.SampledFrom([]string{"", "x", "xy"}).Draw(t, "pre"))})
			case 5:
				op := rapid.SampledFrom([]match.Op{match.OpLt, match.OpGe, match.OpNe}).Draw(t, "op")
				cs = append(cs, match.Constraint{Attr: attr, Op: op, Val: match.Int(int64(rapid.IntRange(0, 2).Draw(t, "r")))})
			case 6:
				op := rapid.SampledFrom([]match.Op{match.OpLe, match.OpGt, match.OpNe}).Draw(t, "sop")
				cs = append(cs, match.Constraint{Attr: attr, Op: op, Val: match.Str(rapid.SampledFrom([]string{"x", "xy"}).Draw(t, "sv"))})
			default:
				cs = append(cs, match.Constraint{Attr: attr, Op: match.OpExists})
			}
		}
		return match.MustFilter(cs...)
	})
}

// TestCandIndexRelativesProperty: over random sets of filters with
// several point attributes each, added and removed at random, the
// candidate index returns every member that covers a query (coverers)
// and every member a query covers (covered), by the structures'
// relation, for members and for other filters alike.
func TestCandIndexRelativesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := NewShallow(Config{}).core
		x := newCandIndex()
		var members []*node
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			if len(members) > 0 && rapid.IntRange(0, 3).Draw(t, "remove") == 0 {
				i := rapid.IntRange(0, len(members)-1).Draw(t, "which")
				x.remove(members[i])
				members = append(members[:i], members[i+1:]...)
				continue
			}
			f := genPointFilter().Draw(t, "f")
			if !match.Satisfiable(f) {
				continue
			}
			n := c.newNode(f, f.String())
			x.add(n)
			members = append(members, n)
		}
		for range rapid.IntRange(1, 8).Draw(t, "queries") {
			f := genPointFilter().Draw(t, "q")
			if !match.Satisfiable(f) {
				continue
			}
			u := c.newNode(f, f.String())
			up, down := map[*node]bool{}, map[*node]bool{}
			for _, w := range x.coverers(u, nil) {
				up[w] = true
			}
			for _, w := range x.covered(u, nil) {
				down[w] = true
			}
			for _, w := range members {
				if relates(&w.key, &u.key) && !up[w] {
					t.Fatalf("coverers of %s miss %s", u.text, w.text)
				}
				if relates(&u.key, &w.key) && !down[w] {
					t.Fatalf("covered of %s miss %s", u.text, w.text)
				}
			}
		}
	})
}
