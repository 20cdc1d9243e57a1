package bloom

import (
	"fmt"
	"math/bits"
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
// terms are indexed per attribute like unqualified ones. Attribute names
// are numbered, so a summary looks each event attribute up once. An
// attribute index whose terms changed is rebuilt on the next Summary that
// needs it, so a burst of subscription changes costs one rebuild. A Dictionary is
// not safe for concurrent use, and Summary mutates it (it re-indexes).
type Dictionary struct {
	p        Params
	n        int
	flat     map[string]*attrTerms // attribute -> unqualified terms
	groups   map[string]*group     // qualifier text -> group
	sigs     map[string]*signature // signature text -> signature
	names    attrNames             // the attributes of flat, groups and sigs
	flatByID []*attrTerms          // flat by attribute id (nil: none)
	sigList  []*signature          // sigs, for the summary's loop
	view     eventView             // scratch: the event being summarised
	tuple    []byte                // scratch
}

// attrTerms are the terms of one qualifier (or none) whose constraint is
// on one attribute.
type attrTerms struct {
	qual match.Filter
	attr string
	id   int32 // attr's number in Dictionary.names
	refs map[match.Constraint]int
	idx  *attrIndex // nil when stale
}

// group holds the terms sharing one qualifier.
type group struct {
	qual  match.Filter
	sig   *signature
	tuple string
	attrs map[string]*attrTerms
	list  []*attrTerms // attrs' values as a list, for the summary's loop
}

// signature holds the groups whose qualifiers constrain the same
// attributes, by the key of their equality values.
type signature struct {
	text    string
	attrs   []string
	ids     []int32 // attrs' numbers in Dictionary.names
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
// the bits of every term e satisfies. It looks each of e's attributes up
// once; the unqualified terms are then found by attribute number, and
// each signature's groups by one map lookup.
func (d *Dictionary) Summary(e match.Event, dst *bitset.BitSet) {
	d.SummaryUpTo(e, dst, len(dst.Words())*64)
}

// SummaryUpTo is Summary that gives up once more than maxBits bits are
// set: it returns true then, leaving dst a partial summary with more
// than maxBits bits. Bits only accumulate, so the full summary would have
// more too; a router that falls back to exact matching past a fill
// threshold stops paying for the rest of a wide event's terms there.
func (d *Dictionary) SummaryUpTo(e match.Event, dst *bitset.BitSet, maxBits int) (over bool) {
	w := dst.Words()
	clear(w)
	d.view.load(e, &d.names)
	if d.orFlat(w, &d.view, maxBits) {
		return true
	}
	d.orGroups(w, &d.view)
	return popCount(w) > maxBits
}

// checkEvery is how many attributes orFlat ORs in between two counts of
// the bits set.
const checkEvery = 32

// orFlat ORs into w the bits of the unqualified terms the event
// satisfies; it stops, returning true, when more than maxBits are set.
func (d *Dictionary) orFlat(w []uint64, v *eventView, maxBits int) bool {
	for i, id := range v.ids {
		if int(id) < len(d.flatByID) {
			if at := d.flatByID[id]; at != nil {
				d.index(at).or(w, v.vals[id])
			}
		}
		if i%checkEvery == checkEvery-1 && popCount(w) > maxBits {
			return true
		}
	}
	return false
}

func popCount(w []uint64) int {
	n := 0
	for _, x := range w {
		n += bits.OnesCount64(x)
	}
	return n
}

// orGroups ORs into w the bits of the qualified terms the event satisfies:
// those of the groups whose qualifier it satisfies.
func (d *Dictionary) orGroups(w []uint64, v *eventView) {
	for _, sig := range d.sigList {
		var ok bool
		d.tuple, ok = eventTuple(d.tuple[:0], v, sig.ids)
		if !ok {
			continue
		}
		for _, g := range sig.byTuple[string(d.tuple)] {
			for _, at := range g.list {
				if val, ok := v.get(at.id); ok {
					d.index(at).or(w, val)
				}
			}
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
	var g *group
	if t.Qualified() {
		if g = d.groupFor(t.Qual, create); g == nil {
			return nil
		}
		attrs = g.attrs
	}
	at := attrs[t.C.Attr]
	if at != nil || !create {
		return at
	}
	at = &attrTerms{qual: t.Qual, attr: t.C.Attr, id: d.names.acquire(t.C.Attr), refs: make(map[match.Constraint]int)}
	attrs[t.C.Attr] = at
	if g != nil {
		g.list = append(g.list, at)
		return at
	}
	if int(at.id) >= len(d.flatByID) {
		d.flatByID = append(d.flatByID, make([]*attrTerms, int(at.id)+1-len(d.flatByID))...)
	}
	d.flatByID[at.id] = at
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
		for _, a := range attrs {
			sig.ids = append(sig.ids, d.names.acquire(a))
		}
		d.sigs[sigText] = sig
		d.sigList = append(d.sigList, sig)
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
	d.names.release(at.attr)
	if !t.Qualified() {
		delete(d.flat, t.C.Attr)
		d.flatByID[at.id] = nil
		return
	}
	g := d.groups[t.Qual.String()]
	delete(g.attrs, t.C.Attr)
	g.list = slices.DeleteFunc(g.list, func(x *attrTerms) bool { return x == at })
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
		d.sigList = slices.DeleteFunc(d.sigList, func(x *signature) bool { return x == sig })
		for _, a := range sig.attrs {
			d.names.release(a)
		}
	}
}
