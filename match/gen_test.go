package match

import (
	"math/rand/v2"
)

// gen makes random filters and events that exercise every corner of the
// semantics: every operator, ints and floats mixed (with values above 2^53),
// strings sharing prefixes, several constraints per attribute, absent
// attributes and type mismatches.
type gen struct {
	r     *rand.Rand
	attrs []string
}

func newGen(seed uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), attrs: []string{"a", "b", "c", "price", "sym", "x.y", "z_1"}}
}

var genStrings = []string{"", "a", "ab", "abc", "abd", "b", "ba", "IBM", "IB", "MSFT", "zz", "\xff", "a\x00"}

func (g *gen) value() Value {
	switch g.r.IntN(10) {
	case 0, 1, 2:
		return Int(int64(g.r.IntN(11)) - 2)
	case 3:
		return MustFloat(float64(g.r.IntN(21))/2 - 2)
	case 4:
		// Tenths: not exact as float32, so they probe float32 keys inexactly.
		return MustFloat(float64(g.r.IntN(31))/10 - 1)
	case 5:
		big := int64(1)<<53 + int64(g.r.IntN(5)) - 2
		if g.r.IntN(2) == 0 {
			return Int(big)
		}
		return MustFloat(float64(big))
	case 6, 7, 8:
		return Str(genStrings[g.r.IntN(len(genStrings))])
	}
	return Bool(g.r.IntN(2) == 0)
}

func (g *gen) constraint() Constraint {
	attr := g.attrs[g.r.IntN(len(g.attrs))]
	op := Op(1 + g.r.IntN(int(OpExists)))
	switch {
	case op == OpExists:
		return Constraint{Attr: attr, Op: op}
	case op.IsStringOp():
		return Constraint{Attr: attr, Op: op, Val: Str(genStrings[g.r.IntN(len(genStrings))])}
	}
	return Constraint{Attr: attr, Op: op, Val: g.value()}
}

func (g *gen) filter() Filter {
	n := g.r.IntN(4)
	cs := make([]Constraint, n)
	for i := range cs {
		cs[i] = g.constraint()
	}
	// Often constrain one attribute twice, as ranges do.
	if n > 0 && g.r.IntN(2) == 0 {
		c := g.constraint()
		c.Attr = cs[0].Attr
		cs = append(cs, c)
	}
	return MustFilter(cs...)
}

func (g *gen) event() Event {
	var as []Attr
	for _, a := range g.attrs {
		if g.r.IntN(4) != 0 {
			as = append(as, Attr{Name: a, Value: g.value()})
		}
	}
	return MustEvent(as...)
}
