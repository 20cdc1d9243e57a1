package bloom

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/match"
)

// Dictionary is the reference-counted set of terms of every subscription
// known anywhere in the network, and the summary builder over it. The
// first router computes an event's summary from it: the union of the bits
// of every term the event satisfies, each term evaluated exactly.
//
// Terms are indexed per attribute (and per qualifier) in chains sorted by
// value; an attribute whose terms changed is re-indexed on the next
// Summary that needs it, so a burst of subscription changes costs one
// rebuild. A Dictionary is not safe for concurrent use, and Summary
// mutates it (it re-indexes).
type Dictionary struct {
	p    Params
	n    int
	flat map[string]*attrTerms  // attribute -> unqualified terms
	qual map[string]*qualGroups // qualifier attribute -> groups
}

// attrTerms are the terms whose constraint is on one attribute, sharing
// one qualifier (or none).
type attrTerms struct {
	q         match.Constraint
	qualified bool
	refs      map[match.Constraint]int
	idx       *attrIndex // nil when stale
}

// qualGroups holds, for one qualifier attribute, a group of terms per
// qualifier constraint, sorted by qualifier value for lookup.
type qualGroups struct {
	groups map[match.Constraint]*group
	sorted *groupsByClass // nil when stale
}

// groupsByClass holds groups sorted by qualifier value, per value class.
type groupsByClass [numClasses][]*group

type group struct {
	q     match.Constraint
	attrs map[string]*attrTerms
}

// NewDictionary returns an empty dictionary for the parameters.
func NewDictionary(p Params) (*Dictionary, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Dictionary{
		p:    p.Resolved(),
		flat: make(map[string]*attrTerms),
		qual: make(map[string]*qualGroups),
	}, nil
}

// Params returns the dictionary's resolved parameters.
func (d *Dictionary) Params() Params { return d.p }

// Len returns the number of distinct terms.
func (d *Dictionary) Len() int { return d.n }

// Add adds one reference to a term.
func (d *Dictionary) Add(t Term) {
	at := d.attrTermsFor(t, true)
	if at.refs[t.C] == 0 {
		d.n++
		at.idx = nil
	}
	at.refs[t.C]++
}

// Remove drops one reference to a term; the term leaves the dictionary
// with its last reference. Removing an absent term is an error.
func (d *Dictionary) Remove(t Term) error {
	at := d.attrTermsFor(t, false)
	if at == nil || at.refs[t.C] == 0 {
		return fmt.Errorf("bloom dictionary: term %s not present", t)
	}
	at.refs[t.C]--
	if at.refs[t.C] == 0 {
		delete(at.refs, t.C)
		d.n--
		at.idx = nil
		d.prune(t, at)
	}
	return nil
}

// Refs returns the number of references to a term (0 when absent).
func (d *Dictionary) Refs(t Term) int {
	if at := d.attrTermsFor(t, false); at != nil {
		return at.refs[t.C]
	}
	return 0
}

// AddFilter adds a reference to every term of f.
func (d *Dictionary) AddFilter(f match.Filter) {
	for _, t := range d.p.Terms(f) {
		d.Add(t)
	}
}

// RemoveFilter drops a reference to every term of f. It fails, changing
// nothing, when some term is absent.
func (d *Dictionary) RemoveFilter(f match.Filter) error {
	terms := d.p.Terms(f)
	for _, t := range terms {
		if d.Refs(t) == 0 {
			return fmt.Errorf("bloom dictionary: remove filter %s: term %s not present", f, t)
		}
	}
	for _, t := range terms {
		if err := d.Remove(t); err != nil {
			return err
		}
	}
	return nil
}

// Terms returns every distinct term, sorted by canonical text: the
// snapshot a router sends when a link comes up.
func (d *Dictionary) Terms() []Term {
	var out []Term
	collect := func(at *attrTerms) {
		for c := range at.refs {
			out = append(out, Term{Q: at.q, C: c, Qualified: at.qualified})
		}
	}
	for _, at := range d.flat {
		collect(at)
	}
	for _, qg := range d.qual {
		for _, g := range qg.groups {
			for _, at := range g.attrs {
				collect(at)
			}
		}
	}
	slices.SortFunc(out, func(a, b Term) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Summary sets dst (a filter of M bits) to the summary of e: the union of
// the bits of every term e satisfies.
func (d *Dictionary) Summary(e match.Event, dst *bitset.BitSet) {
	w := dst.Words()
	clear(w)
	for i := range e.Len() {
		a := e.At(i)
		if at := d.flat[a.Name]; at != nil {
			d.index(at).or(w, a.Value)
		}
		if qg := d.qual[a.Name]; qg != nil {
			for _, g := range d.sortedGroups(qg).matching(a.Value) {
				d.orGroup(w, g, e)
			}
		}
	}
}

func (d *Dictionary) orGroup(w []uint64, g *group, e match.Event) {
	for i := range e.Len() {
		a := e.At(i)
		if at := g.attrs[a.Name]; at != nil {
			d.index(at).or(w, a.Value)
		}
	}
}

// index returns the attribute's index, rebuilding it when stale.
func (d *Dictionary) index(at *attrTerms) *attrIndex {
	if at.idx == nil {
		cs := make([]match.Constraint, 0, len(at.refs))
		for c := range at.refs {
			cs = append(cs, c)
		}
		at.idx = newAttrIndex(d.p, cs, func(c match.Constraint) []uint32 {
			return d.p.positions(Term{Q: at.q, C: c, Qualified: at.qualified}.Key(), nil)
		})
	}
	return at.idx
}

// attrTermsFor finds (or, when create is set, makes) the attrTerms that
// holds t.
func (d *Dictionary) attrTermsFor(t Term, create bool) *attrTerms {
	attrs := d.flat
	if t.Qualified {
		g := d.groupFor(t.Q, create)
		if g == nil {
			return nil
		}
		attrs = g.attrs
	}
	at := attrs[t.C.Attr]
	if at == nil && create {
		at = &attrTerms{q: t.Q, qualified: t.Qualified, refs: make(map[match.Constraint]int)}
		attrs[t.C.Attr] = at
	}
	return at
}

func (d *Dictionary) groupFor(q match.Constraint, create bool) *group {
	qg := d.qual[q.Attr]
	if qg == nil {
		if !create {
			return nil
		}
		qg = &qualGroups{groups: make(map[match.Constraint]*group)}
		d.qual[q.Attr] = qg
	}
	g := qg.groups[q]
	if g == nil && create {
		g = &group{q: q, attrs: make(map[string]*attrTerms)}
		qg.groups[q] = g
		qg.sorted = nil
	}
	return g
}

// prune drops the containers of a term that left the dictionary when they
// became empty.
func (d *Dictionary) prune(t Term, at *attrTerms) {
	if len(at.refs) > 0 {
		return
	}
	if !t.Qualified {
		delete(d.flat, t.C.Attr)
		return
	}
	qg := d.qual[t.Q.Attr]
	g := qg.groups[t.Q]
	delete(g.attrs, t.C.Attr)
	if len(g.attrs) > 0 {
		return
	}
	delete(qg.groups, t.Q)
	qg.sorted = nil
	if len(qg.groups) == 0 {
		delete(d.qual, t.Q.Attr)
	}
}

// sortedGroups returns the groups of a qualifier attribute sorted by
// qualifier value within each value class, re-sorting when stale.
func (d *Dictionary) sortedGroups(qg *qualGroups) *groupsByClass {
	if qg.sorted == nil {
		var s groupsByClass
		for _, g := range qg.groups {
			cl := classOf(g.q.Val.Kind())
			s[cl] = append(s[cl], g)
		}
		for cl := range s {
			slices.SortFunc(s[cl], func(a, b *group) int { return compareValues(a.q.Val, b.q.Val) })
		}
		qg.sorted = &s
	}
	return qg.sorted
}

// matching returns the groups whose qualifier `attr == q` holds for the
// event value v.
func (s *groupsByClass) matching(v match.Value) []*group {
	cl := classOf(v.Kind())
	gs := s[cl]
	i, _ := slices.BinarySearchFunc(gs, v, func(g *group, v match.Value) int { return compareValues(g.q.Val, v) })
	j := i
	for j < len(gs) && compareValues(gs[j].q.Val, v) == 0 {
		j++
	}
	return gs[i:j]
}
