package bloomfwd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Dict is a router's constraint dictionary and its flood over the links:
// the terms of its local clients' subscriptions and the terms each link
// says are in use on its side, the bloom.Dictionary over their union (the
// summary builder), and the messages that keep every neighbour's view up
// to date. See the package doc.
type Dict struct {
	p       bloom.Params
	dict    *bloom.Dictionary
	terms   map[string]*entry             // canonical text -> entry
	links   map[mesh.Link]map[string]bool // terms held from each link up
	summary *bitset.BitSet                // scratch
	// OnNewTerm, if set, is called with every term that enters the
	// dictionary (from a local filter or a link), before any later
	// Summarize can test it: the router widens the set of attribute names
	// its readers decode with it.
	OnNewTerm func(bloom.Term)
}

// entry is one term in use: by how many local subscriptions, and in all
// (local references plus links holding it).
type entry struct {
	t     bloom.Term
	local int
	count int
}

// NewDict returns an empty dictionary for cfg's parameters.
func NewDict(cfg Config) (*Dict, error) {
	cfg, err := cfg.resolved()
	if err != nil {
		return nil, err
	}
	d, err := bloom.NewDictionary(cfg.Params)
	if err != nil {
		return nil, err
	}
	return &Dict{
		p: cfg.Params, dict: d,
		terms:   make(map[string]*entry),
		links:   make(map[mesh.Link]map[string]bool),
		summary: cfg.Params.NewFilter(),
	}, nil
}

// Len returns the number of distinct terms in use.
func (d *Dict) Len() int { return len(d.terms) }

// Has reports whether term t is in the dictionary.
func (d *Dict) Has(t bloom.Term) bool { return d.terms[t.String()] != nil }

// Terms returns the terms in use, by canonical text.
func (d *Dict) Terms() []string { return slices.Sorted(maps.Keys(d.terms)) }

// AddFilter adds the terms of a local client's subscription. The caller
// sends the result before the mesh's messages for the subscription.
func (d *Dict) AddFilter(f match.Filter) []mesh.Send {
	ch := changes{}
	for _, t := range d.p.Terms(f) {
		d.bump(ch, t.String(), t, 0, 1)
	}
	return d.flush(ch)
}

// RemoveFilter drops the terms of a local subscription that AddFilter
// added; a filter whose terms are not all in local use is an error and
// changes nothing.
func (d *Dict) RemoveFilter(f match.Filter) ([]mesh.Send, error) {
	terms := d.p.Terms(f)
	for _, t := range terms {
		if e := d.terms[t.String()]; e == nil || e.local == 0 {
			return nil, fmt.Errorf("bloom dictionary: remove %s: term %s not in local use", f, t)
		}
	}
	ch := changes{}
	for _, t := range terms {
		d.bump(ch, t.String(), t, 0, -1)
	}
	return d.flush(ch), nil
}

// LinkUp starts flooding to a new link: the result is the snapshot of
// every term in use, to send right after the link's hello and before the
// mesh's snapshot.
func (d *Dict) LinkUp(l mesh.Link) []mesh.Send {
	d.links[l] = make(map[string]bool)
	m := &wire.BloomTerms{Snapshot: true}
	for _, text := range d.Terms() {
		m.Add = append(m.Add, toWire(d.terms[text].t))
	}
	return []mesh.Send{{Link: l, Msg: m}}
}

// LinkDown forgets a link and the terms it held; the result tells the
// other links about terms no longer in use.
func (d *Dict) LinkDown(l mesh.Link) []mesh.Send {
	held, ok := d.links[l]
	if !ok {
		return nil
	}
	ch := changes{}
	for _, text := range slices.Sorted(maps.Keys(held)) {
		d.bump(ch, text, d.terms[text].t, l, -1)
	}
	delete(d.links, l)
	return d.flush(ch)
}

// Receive applies a BloomTerms that arrived on link l and returns the
// messages to send on the other links, which the caller sends before
// handling anything received later. Messages on a link not up are
// ignored. A bad message returns an error and changes nothing.
func (d *Dict) Receive(l mesh.Link, m *wire.BloomTerms) ([]mesh.Send, error) {
	held, ok := d.links[l]
	if !ok {
		return nil, nil
	}
	add, remove, err := d.diff(held, m)
	if err != nil {
		return nil, err
	}
	ch := changes{}
	for _, t := range add {
		d.bump(ch, t.String(), t, l, 1)
	}
	for _, t := range remove {
		d.bump(ch, t.String(), t, l, -1)
	}
	return d.flush(ch), nil
}

// diff parses m and returns the terms it adds to and removes from held,
// in canonical order, without changing anything. An incremental message
// costs its own size, not held's: a link floods a term per message as
// subscriptions arrive, and cloning and sorting every term held from it
// for each made installing n subscriptions in Bloom mode quadratic. A
// snapshot replaces held, so it is compared in full.
func (d *Dict) diff(held map[string]bool, m *wire.BloomTerms) (add, remove []bloom.Term, err error) {
	removed := make(map[string]bool, len(m.Remove))
	for _, w := range m.Remove {
		t, err := parseTerm(d.p, w)
		if err != nil {
			return nil, nil, fmt.Errorf("bloom terms: removed %w", err)
		}
		text := t.String()
		if m.Snapshot || !held[text] || removed[text] {
			return nil, nil, fmt.Errorf("bloom terms: removes %s, which is not held", t)
		}
		removed[text] = true
	}
	added := make(map[string]bloom.Term, len(m.Add))
	for _, w := range m.Add {
		t, err := parseTerm(d.p, w)
		if err != nil {
			return nil, nil, fmt.Errorf("bloom terms: %w", err)
		}
		text := t.String()
		if _, twice := added[text]; twice || (!m.Snapshot && held[text] && !removed[text]) {
			return nil, nil, fmt.Errorf("bloom terms: adds %s, which is already held", t)
		}
		added[text] = t
	}
	for _, text := range slices.Sorted(maps.Keys(added)) {
		if !held[text] {
			add = append(add, added[text])
		}
	}
	gone := removed // a snapshot drops every held term it does not add
	if m.Snapshot {
		gone = held
	}
	for _, text := range slices.Sorted(maps.Keys(gone)) {
		if _, back := added[text]; !back {
			remove = append(remove, d.terms[text].t)
		}
	}
	return add, remove, nil
}

// bump changes the references to a term by n (+1 or -1) from link from
// (0: local clients), and records, per link, whether the term started or
// stopped being in use on this side of it: in use by a local client or
// held from another link.
func (d *Dict) bump(ch changes, text string, t bloom.Term, from mesh.Link, n int) {
	e := d.terms[text]
	if e == nil {
		e = &entry{t: t}
		d.terms[text] = e
		if d.OnNewTerm != nil {
			d.OnNewTerm(t)
		}
	}
	before := e.count
	e.count += n
	if from == 0 {
		e.local += n
	} else if n > 0 {
		d.links[from][text] = true
	} else {
		delete(d.links[from], text)
	}
	if n > 0 {
		d.dict.Add(t)
	} else if err := d.dict.Remove(t); err != nil {
		panic(fmt.Sprintf("bloomfwd: dictionary lost %s: %v", t, err)) // counts mirror it
	}
	for l, held := range d.links {
		heldAfter := 0
		if held[text] {
			heldAfter = 1
		}
		heldBefore := heldAfter
		if l == from {
			heldBefore -= n
		}
		was, is := before-heldBefore > 0, e.count-heldAfter > 0
		switch {
		case !was && is:
			ch.add(l, e.t, 1)
		case was && !is:
			ch.add(l, e.t, -1)
		}
	}
	if e.count == 0 {
		delete(d.terms, text)
	}
}

// changes accumulates, per link, the net change of the terms in use on
// this side of it over one input: +1 added, -1 removed.
type changes map[mesh.Link]map[string]*netTerm

type netTerm struct {
	t bloom.Term
	n int
}

func (ch changes) add(l mesh.Link, t bloom.Term, n int) {
	if ch[l] == nil {
		ch[l] = make(map[string]*netTerm)
	}
	text := t.String()
	if ch[l][text] == nil {
		ch[l][text] = &netTerm{t: t}
	}
	ch[l][text].n += n
}

// flush turns the net changes into one BloomTerms per link, in link order.
func (d *Dict) flush(ch changes) []mesh.Send {
	var out []mesh.Send
	for _, l := range slices.Sorted(maps.Keys(ch)) {
		m := &wire.BloomTerms{}
		for _, text := range slices.Sorted(maps.Keys(ch[l])) {
			switch nt := ch[l][text]; {
			case nt.n > 0:
				m.Add = append(m.Add, toWire(nt.t))
			case nt.n < 0:
				m.Remove = append(m.Remove, toWire(nt.t))
			}
		}
		if len(m.Add)+len(m.Remove) > 0 {
			out = append(out, mesh.Send{Link: l, Msg: m})
		}
	}
	return out
}
