package baselinetest

import (
	"math/rand/v2"

	"github.com/sift-pubsub/sift/match"
)

// Gen draws filters and events over a few attributes and small value
// domains, so that filters overlap and match often. Nine filters in ten
// use only constraints the algorithm supports; the tenth may hold any.
type Gen struct {
	r        *rand.Rand
	supports Supports
}

// NewGen returns the generator of a seed for an algorithm.
func NewGen(seed uint64, supports Supports) *Gen {
	return &Gen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), supports: supports}
}

var (
	attrs  = []string{"a", "b", "c", "d", "s"}
	strs   = []string{"", "a", "ab", "abc", "b", "ba", "IBM", "\xff"}
	allOps = []match.Op{match.OpEq, match.OpNe, match.OpLt, match.OpLe, match.OpGt, match.OpGe, match.OpPrefix, match.OpSuffix, match.OpContains, match.OpExists}
	big    = int64(1) << 53
)

// value draws a number most of the time, else a string or a bool.
func (g *Gen) value() match.Value {
	switch n := g.r.IntN(20); {
	case n < 8:
		return match.Int(g.r.Int64N(13) - 2)
	case n < 12:
		return match.MustFloat(float64(g.r.IntN(25))/2 - 2)
	case n < 14:
		d := g.r.Int64N(5) - 2
		if g.r.IntN(2) == 0 {
			return match.Int(big + d)
		}
		return match.MustFloat(float64(big + 2*d))
	case n < 17:
		return match.Str(strs[g.r.IntN(len(strs))])
	}
	return match.Bool(g.r.IntN(2) == 0)
}

func (g *Gen) constraint() match.Constraint {
	c := match.Constraint{Attr: attrs[g.r.IntN(len(attrs))], Op: allOps[g.r.IntN(len(allOps))]}
	switch {
	case c.Op == match.OpExists:
	case c.Op.IsStringOp():
		c.Val = match.Str(strs[g.r.IntN(len(strs))])
	default:
		c.Val = g.value()
	}
	return c
}

// supportedConstraint draws constraints until one is supported (giving up
// after a while, for algorithms that support little).
func (g *Gen) supportedConstraint() match.Constraint {
	c := g.constraint()
	for range 100 {
		if g.supports(c) {
			break
		}
		c = g.constraint()
	}
	return c
}

// Filter returns a random filter of 0 to 4 constraints, often with a
// range (two constraints on one attribute) as the HEM workload has.
func (g *Gen) Filter() match.Filter {
	draw := g.supportedConstraint
	if g.r.IntN(10) == 0 {
		draw = g.constraint
	}
	var cs []match.Constraint
	for range g.r.IntN(4) {
		cs = append(cs, draw())
	}
	if g.r.IntN(2) == 0 {
		lo, hi := draw(), draw()
		hi.Attr = lo.Attr
		cs = append(cs, lo, hi)
	}
	return match.MustFilter(cs...)
}

func (g *Gen) supported(f match.Filter) bool {
	for i := range f.Len() {
		if !g.supports(f.At(i)) {
			return false
		}
	}
	return true
}

// Event returns an event giving most attributes a value, sometimes of an
// unexpected type.
func (g *Gen) Event() match.Event {
	var as []match.Attr
	for _, a := range attrs {
		if g.r.IntN(5) != 0 {
			as = append(as, match.Attr{Name: a, Value: g.value()})
		}
	}
	return match.MustEvent(as...)
}
