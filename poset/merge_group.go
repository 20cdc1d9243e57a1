package poset

import (
	"math"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// mgroup holds the merged items that constrain every attribute but one,
// attr, identically (they share a groupKey): the only items that can merge
// with one another on attr without one covering the other. Items with a
// string equality on attr are also filed by its value: two different
// string values are two points, which never touch or overlap, so such
// items merge on attr only with items having the same value or none.
type mgroup struct {
	attr    string
	members []*mitem            // every item, in insertion order
	rest    []*mitem            // items without a string equality on attr
	eq      map[string][]*mitem // the others, by value
}

func newMgroup(attr string) *mgroup {
	return &mgroup{attr: attr, eq: make(map[string][]*mitem)}
}

func (g *mgroup) add(x *mitem) {
	g.members = append(g.members, x)
	if v, ok := uEq(x.n, g.attr); ok {
		g.eq[v] = append(g.eq[v], x)
	} else {
		g.rest = append(g.rest, x)
	}
}

func (g *mgroup) remove(x *mitem) {
	is := func(o *mitem) bool { return o == x }
	g.members = slices.DeleteFunc(g.members, is)
	if v, ok := uEq(x.n, g.attr); ok {
		if l := slices.DeleteFunc(g.eq[v], is); len(l) == 0 {
			delete(g.eq, v)
		} else {
			g.eq[v] = l
		}
	} else {
		g.rest = slices.DeleteFunc(g.rest, is)
	}
}

func (g *mgroup) empty() bool { return len(g.members) == 0 }

// candidates visits, in a deterministic order, the members that may merge
// with x on attr, until visit returns true.
func (g *mgroup) candidates(x *mitem, visit func(*mitem) bool) {
	lists := [][]*mitem{g.members}
	if v, ok := uEq(x.n, g.attr); ok {
		lists = [][]*mitem{g.eq[v], g.rest}
	}
	for _, l := range lists {
		for _, y := range l {
			if !apart(x.n, y.n, g.attr) && visit(y) {
				return
			}
		}
	}
}

// groupKeys returns, per attribute a of f in order, the key of the group
// of items f may merge with on a: a and the constraints of f on every
// other attribute. Two filters merge on one attribute only if they share
// that key.
func groupKeys(f match.Filter) []string {
	attrs := f.Attrs()
	keys := make([]string, len(attrs))
	var b strings.Builder
	for i, a := range attrs {
		b.Reset()
		b.WriteString(a)
		for j := range f.Len() {
			if c := f.At(j); c.Attr != a {
				b.WriteByte(0)
				b.WriteString(c.String())
			}
		}
		keys[i] = b.String()
	}
	return keys
}

// apart reports that the numeric intervals of two items on attr neither
// overlap nor touch, so they cannot merge on attr: some number an event
// can carry lies strictly between them. Their spans hold the smallest and
// largest numbers each admits, rounded to float64 (boxOf), so a lower end
// beyond the float after the other's upper end proves such a number: the
// float after a rounded maximum lies above the maximum itself. Loose
// items have no spans and are never apart.
func apart(x, y *node, attr string) bool {
	sx, okx := spanOf(x, attr)
	sy, oky := spanOf(y, attr)
	return okx && oky && (gapBetween(sx.hi, sy.lo) || gapBetween(sy.hi, sx.lo))
}

// gapBetween reports whether a number lies strictly between an interval
// whose largest number rounds to hi and one whose smallest rounds to lo.
func gapBetween(hi, lo float64) bool {
	return math.Nextafter(hi, math.Inf(1)) < lo
}
