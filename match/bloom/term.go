package bloom

import (
	"hash/fnv"

	"github.com/sift-pubsub/sift/match"
)

// Term is one dictionary entry: a constraint C, optionally qualified by an
// equality constraint Q of the same filter. A term holds on an event when
// C holds and, if Qualified, Q holds too. Terms are comparable and serve
// as map keys.
type Term struct {
	Q         match.Constraint
	C         match.Constraint
	Qualified bool
}

// Holds reports whether the term holds on e, by the exact semantics.
func (t Term) Holds(e match.Event) bool {
	if t.Qualified && !holds(t.Q, e) {
		return false
	}
	return holds(t.C, e)
}

func holds(c match.Constraint, e match.Event) bool {
	v, ok := e.Get(c.Attr)
	return c.Holds(v, ok)
}

// String is the term's canonical text: the constraint, or
// `qualifier && constraint`. Routers identify terms by this text.
func (t Term) String() string {
	if t.Qualified {
		return t.Q.String() + " && " + t.C.String()
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

// Terms returns the dictionary terms of a filter, whose conjunction is
// equivalent to the filter and each of which the filter implies. With Flat
// parameters every constraint is its own term. Otherwise the first
// equality constraint q (in canonical order) qualifies every non-equality
// constraint c, giving the term `q && c`, and every equality constraint is
// a term of its own. The empty filter has no terms.
func (p Params) Terms(f match.Filter) []Term {
	terms := make([]Term, 0, f.Len())
	q, hasQ := firstEquality(f)
	for i := range f.Len() {
		c := f.At(i)
		if p.Flat || !hasQ || c.Op == match.OpEq {
			terms = append(terms, Term{C: c})
			continue
		}
		terms = append(terms, Term{Q: q, C: c, Qualified: true})
	}
	return terms
}

func firstEquality(f match.Filter) (match.Constraint, bool) {
	for i := range f.Len() {
		if c := f.At(i); c.Op == match.OpEq {
			return c, true
		}
	}
	return match.Constraint{}, false
}
