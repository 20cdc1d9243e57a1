package bloom

import (
	"hash/fnv"

	"github.com/sift-pubsub/sift/match"
)

// Term is one dictionary entry: a constraint C, qualified by the equality
// constraints Qual of the filter it comes from (Qual is the empty filter
// for an unqualified term). A term holds on an event when C and every
// constraint of Qual hold.
type Term struct {
	Qual match.Filter
	C    match.Constraint
}

// Qualified reports whether the term has qualifying equalities.
func (t Term) Qualified() bool { return t.Qual.Len() > 0 }

// Holds reports whether the term holds on e, by the exact semantics.
func (t Term) Holds(e match.Event) bool {
	if !t.Qual.Matches(e) {
		return false
	}
	v, ok := e.Get(t.C.Attr)
	return t.C.Holds(v, ok)
}

// String is the term's canonical text: the constraint, or
// `qualifying equalities && constraint`. Routers identify terms by it.
func (t Term) String() string {
	if t.Qualified() {
		return t.Qual.String() + " && " + t.C.String()
	}
	return t.C.String()
}

// Key is the term's 64-bit id: FNV-1a of its canonical text. Distinct
// terms may share a key; that costs false positives, never a false
// negative (see the package documentation).
func (t Term) Key() uint64 {
	h := fnv.New64a()
	h.Write([]byte(t.String()))
	return h.Sum64()
}

// Terms returns the dictionary terms of a filter: terms that the filter
// implies and whose conjunction is equivalent to it. With Flat parameters
// every constraint is its own term. Otherwise every equality constraint is
// a term of its own, and every other constraint c becomes the term
// `E && c`, where E is the conjunction of all the filter's equalities (c
// alone when there are none). The empty filter has no terms.
func (p Params) Terms(f match.Filter) []Term {
	var eqs []match.Constraint
	for i := range f.Len() {
		if c := f.At(i); c.Op == match.OpEq {
			eqs = append(eqs, c)
		}
	}
	var qual match.Filter
	if !p.Flat && len(eqs) > 0 {
		qual = match.MustFilter(eqs...)
	}
	terms := make([]Term, 0, f.Len())
	for i := range f.Len() {
		c := f.At(i)
		if c.Op == match.OpEq {
			terms = append(terms, Term{C: c})
		} else {
			terms = append(terms, Term{Qual: qual, C: c})
		}
	}
	return terms
}
