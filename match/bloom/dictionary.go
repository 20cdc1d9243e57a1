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
// Unqualified terms are indexed per attribute. Qualified terms are grouped
// by qualifier; qualifiers are grouped by signature (the attributes they
// constrain), and a signature finds the groups whose equalities an event
// satisfies with one map lookup of the event's values. Within a group,
// terms are indexed per attribute like unqualified ones. An attribute
// index whose terms changed is rebuilt on the next Summary that needs it,
// so a burst of subscription changes costs one rebuild. A Dictionary is
// not safe for concurrent use, and Summary mutates it (it re-indexes).
type Dictionary struct {
	p      Params
	n      int
	flat   map[string]*attrTerms // attribute -> unqualified terms
	groups map[string]*group     // qualifier text -> group
	sigs   map[string]*signature // signature text -> signature
	tuple  []byte                // scratch
}

// attrTerms are the terms of one qualifier (or none) whose constraint is
// on one attribute.
type attrTerms struct {
	qual match.Filter
	refs map[match.Constraint]int
	idx  *attrIndex // nil when stale
}

// group holds the terms sharing one qualifier.
type group struct {
	qual  match.Filter
	sig   *signature
	tuple string
	attrs map[string]*attrTerms
}

// signature holds the groups whose qualifiers constrain the same
// attributes, by the key of their equality values.
type signature struct {
	text    string
	attrs   []string
	byTuple map[string][]*group
}

// NewDictionary returns an empty dictionary for the parameters.
func NewDictionary(p Params) (*Dictionary, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Dictionary{
		p:      p.Resolved(),
		flat:   make(map[string]*attrTerms),
		groups: make(map[string]*group),
		sigs:   make(map[string]*signature),
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
			out = append(out, Term{Qual: at.qual, C: c})
		}
	}
	for _, at := range d.flat {
		collect(at)
	}
	for _, g := range d.groups {
		for _, at := range g.attrs {
			collect(at)
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
	d.orAttrs(w, d.flat, e)
	for _, sig := range d.sigs {
		var ok bool
		d.tuple, ok = eventTuple(d.tuple[:0], e, sig.attrs)
		if !ok {
			continue
		}
		for _, g := range sig.byTuple[string(d.tuple)] {
			d.orAttrs(w, g.attrs, e)
		}
	}
}

// orAttrs ORs into w the bits of the terms in attrs that e satisfies.
func (d *Dictionary) orAttrs(w []uint64, attrs map[string]*attrTerms, e match.Event) {
	if len(attrs) == 0 {
		return
	}
	for i := range e.Len() {
		a := e.At(i)
		if at := attrs[a.Name]; at != nil {
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
			return d.p.positions(Term{Qual: at.qual, C: c}.Key(), nil)
		})
	}
	return at.idx
}

// attrTermsFor finds (or, when create is set, makes) the attrTerms that
// holds t.
func (d *Dictionary) attrTermsFor(t Term, create bool) *attrTerms {
	attrs := d.flat
	if t.Qualified() {
		g := d.groupFor(t.Qual, create)
		if g == nil {
			return nil
		}
		attrs = g.attrs
	}
	at := attrs[t.C.Attr]
	if at == nil && create {
		at = &attrTerms{qual: t.Qual, refs: make(map[match.Constraint]int)}
		attrs[t.C.Attr] = at
	}
	return at
}

func (d *Dictionary) groupFor(qual match.Filter, create bool) *group {
	text := qual.String()
	if g := d.groups[text]; g != nil || !create {
		return g
	}
	attrs := make([]string, qual.Len())
	for i := range attrs {
		attrs[i] = qual.At(i).Attr
	}
	sigText := strings.Join(attrs, ",")
	sig := d.sigs[sigText]
	if sig == nil {
		sig = &signature{text: sigText, attrs: attrs, byTuple: make(map[string][]*group)}
		d.sigs[sigText] = sig
	}
	g := &group{qual: qual, sig: sig, tuple: qualTuple(qual), attrs: make(map[string]*attrTerms)}
	d.groups[text] = g
	sig.byTuple[g.tuple] = append(sig.byTuple[g.tuple], g)
	return g
}

// prune drops the containers of a term that left the dictionary when they
// became empty.
func (d *Dictionary) prune(t Term, at *attrTerms) {
	if len(at.refs) > 0 {
		return
	}
	if !t.Qualified() {
		delete(d.flat, t.C.Attr)
		return
	}
	g := d.groups[t.Qual.String()]
	delete(g.attrs, t.C.Attr)
	if len(g.attrs) > 0 {
		return
	}
	delete(d.groups, t.Qual.String())
	sig := g.sig
	gs := slices.DeleteFunc(sig.byTuple[g.tuple], func(x *group) bool { return x == g })
	if len(gs) == 0 {
		delete(sig.byTuple, g.tuple)
	} else {
		sig.byTuple[g.tuple] = gs
	}
	if len(sig.byTuple) == 0 {
		delete(d.sigs, sig.text)
	}
}
