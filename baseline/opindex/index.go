package opindex

import (
	"fmt"
	"math"

	"github.com/sift-pubsub/sift/baseline/internal/slots"
	"github.com/sift-pubsub/sift/match"
)

func init() {
	match.RegisterIndex(match.IndexInfo{
		Name:        "opindex",
		Description: "baseline: OpIndex (Zhang et al. 2014), pivot-attribute partitions of per-operator indexes, counting",
		New:         func() match.Index { return New() },
	})
}

// Index is an OpIndex matcher.
type Index struct {
	slots   *slots.Table
	parts   map[string]*partition // by pivot attribute
	freq    map[string]int        // subscriptions constraining each attribute
	filters []match.Filter        // by slot
	pivot   []string              // by slot
	need    []uint16              // predicates per slot (0 for a free slot)
	count   []uint16              // per event: need minus the predicates satisfied
	always  []uint32              // slots of filters without constraints
	hits    []uint32
}

// partition holds the subscriptions of one pivot attribute, their
// predicates grouped by attribute and operator.
type partition struct {
	attrs map[string]*group
	n     int // subscriptions
}

// New returns an empty index.
func New() *Index {
	return &Index{slots: slots.New("opindex"), parts: make(map[string]*partition), freq: make(map[string]int)}
}

func checkSize(f match.Filter) error {
	if f.Len() > math.MaxUint16 {
		return fmt.Errorf("opindex: a filter of %d constraints exceeds the %d a counter holds", f.Len(), math.MaxUint16)
	}
	return nil
}

// Insert adds a subscription; every constraint is supported.
func (x *Index) Insert(id match.ID, f match.Filter) error {
	if err := x.slots.CheckNew(id); err != nil {
		return err
	}
	if err := checkSize(f); err != nil {
		return err
	}
	x.count1(f, 1)
	x.add(id, f)
	return nil
}

// Load inserts many subscriptions, all or none; pivots are chosen with
// the attribute counts of the whole load.
func (x *Index) Load(ids []match.ID, filters []match.Filter) error {
	if err := x.slots.CheckLoad(ids, filters); err != nil {
		return err
	}
	for _, f := range filters {
		if err := checkSize(f); err != nil {
			return err
		}
	}
	for _, f := range filters {
		x.count1(f, 1)
	}
	for i, id := range ids {
		x.add(id, filters[i])
	}
	return nil
}

// count1 adds d to the frequency of each attribute f constrains.
func (x *Index) count1(f match.Filter, d int) {
	for _, a := range f.Attrs() {
		if x.freq[a] += d; x.freq[a] == 0 {
			delete(x.freq, a)
		}
	}
}

// choosePivot returns f's attribute constrained by the fewest
// subscriptions (the first such name on ties).
func (x *Index) choosePivot(f match.Filter) string {
	best, bestN := "", 0
	for _, a := range f.Attrs() {
		if n := x.freq[a]; best == "" || n < bestN {
			best, bestN = a, n
		}
	}
	return best
}

func (x *Index) add(id match.ID, f match.Filter) {
	s := x.slots.Add(id)
	if int(s) == len(x.filters) {
		x.filters = append(x.filters, f)
		x.pivot = append(x.pivot, "")
		x.need = append(x.need, 0)
		x.count = append(x.count, 0)
	}
	x.filters[s], x.need[s] = f, uint16(f.Len())
	if f.Len() == 0 {
		x.pivot[s] = ""
		x.always = append(x.always, s)
		return
	}
	pv := x.choosePivot(f)
	x.pivot[s] = pv
	p := x.parts[pv]
	if p == nil {
		p = &partition{attrs: make(map[string]*group)}
		x.parts[pv] = p
	}
	p.n++
	for i := range f.Len() {
		c := f.At(i)
		a := p.attrs[c.Attr]
		if a == nil {
			a = &group{}
			p.attrs[c.Attr] = a
		}
		a.add(c, s)
	}
}

// Delete removes a subscription.
func (x *Index) Delete(id match.ID) error {
	s, err := x.slots.Slot(id)
	if err != nil {
		return err
	}
	f := x.filters[s]
	x.count1(f, -1)
	if f.Len() == 0 {
		for i, t := range x.always {
			if t == s {
				x.always = append(x.always[:i], x.always[i+1:]...)
				break
			}
		}
	} else {
		p := x.parts[x.pivot[s]]
		for i := range f.Len() {
			c := f.At(i)
			a := p.attrs[c.Attr]
			a.remove(c, s)
			if a.n == 0 {
				delete(p.attrs, c.Attr)
			}
		}
		if p.n--; p.n == 0 {
			delete(x.parts, x.pivot[s])
		}
	}
	x.filters[s], x.pivot[s], x.need[s] = match.Filter{}, "", 0
	x.slots.Free(id)
	return nil
}

// Len returns the number of subscriptions.
func (x *Index) Len() int { return x.slots.Len() }

// Match visits the partition of every event attribute that is a pivot,
// counts down, per subscription there, the predicates the event
// satisfies, and appends the subscriptions whose count reaches zero.
func (x *Index) Match(e match.Event, dst []match.ID) []match.ID {
	copy(x.count, x.need)
	c := counter{count: x.count, hits: x.hits[:0]}
	for i := range e.Len() {
		p := x.parts[e.At(i).Name]
		if p == nil {
			continue
		}
		for j := range e.Len() {
			at := e.At(j)
			if a := p.attrs[at.Name]; a != nil {
				a.match(at.Value, &c)
			}
		}
	}
	x.hits = c.hits
	for _, s := range x.always {
		dst = append(dst, x.slots.ID(s))
	}
	for _, s := range x.hits {
		dst = append(dst, x.slots.ID(s))
	}
	return dst
}
