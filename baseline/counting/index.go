package counting

import (
	"fmt"
	"math"

	"github.com/sift-pubsub/sift/baseline/internal/preds"
	"github.com/sift-pubsub/sift/baseline/internal/slots"
	"github.com/sift-pubsub/sift/match"
)

func init() {
	match.RegisterIndex(match.IndexInfo{
		Name:        "counting",
		Description: "baseline: forward counting (Fabret et al. 2001), per attribute and operator predicate indexes",
		New:         func() match.Index { return New() },
	})
}

// Index is the forward-counting matcher. The zero value is not usable;
// call New.
type Index struct {
	slots   *slots.Table
	attrs   map[string]*preds.Attr
	filters []match.Filter // by slot
	need    []uint16       // constraints per slot
	count   []uint16       // satisfied constraints, per event
	always  []uint32       // slots of filters without constraints
	hits    []uint32
}

// New returns an empty index.
func New() *Index {
	return &Index{slots: slots.New("counting"), attrs: make(map[string]*preds.Attr)}
}

// Insert adds a subscription; every constraint is supported.
func (x *Index) Insert(id match.ID, f match.Filter) error {
	if err := x.slots.CheckNew(id); err != nil {
		return err
	}
	if err := checkSize(f); err != nil {
		return err
	}
	x.add(id, f)
	return nil
}

// checkSize refuses filters whose constraint count overflows a counter.
func checkSize(f match.Filter) error {
	if f.Len() > math.MaxUint16 {
		return fmt.Errorf("counting: a filter of %d constraints exceeds the %d a counter holds", f.Len(), math.MaxUint16)
	}
	return nil
}

// Load inserts many subscriptions.
func (x *Index) Load(ids []match.ID, filters []match.Filter) error {
	if err := x.slots.CheckLoad(ids, filters); err != nil {
		return err
	}
	for _, f := range filters {
		if err := checkSize(f); err != nil {
			return err
		}
	}
	for i, id := range ids {
		x.add(id, filters[i])
	}
	return nil
}

func (x *Index) add(id match.ID, f match.Filter) {
	s := x.slots.Add(id)
	if int(s) == len(x.filters) {
		x.filters = append(x.filters, f)
		x.need = append(x.need, 0)
		x.count = append(x.count, 0)
	}
	x.filters[s], x.need[s] = f, uint16(f.Len())
	if f.Len() == 0 {
		x.always = append(x.always, s)
		return
	}
	for i := range f.Len() {
		c := f.At(i)
		a := x.attrs[c.Attr]
		if a == nil {
			a = preds.New()
			x.attrs[c.Attr] = a
		}
		a.Add(c, s)
	}
}

// Delete removes a subscription.
func (x *Index) Delete(id match.ID) error {
	s, err := x.slots.Slot(id)
	if err != nil {
		return err
	}
	f := x.filters[s]
	for i := range f.Len() {
		c := f.At(i)
		a := x.attrs[c.Attr]
		a.Remove(c, s)
		if a.Len() == 0 {
			delete(x.attrs, c.Attr)
		}
	}
	if f.Len() == 0 {
		for i, t := range x.always {
			if t == s {
				x.always = append(x.always[:i], x.always[i+1:]...)
				break
			}
		}
	}
	x.filters[s] = match.Filter{}
	x.slots.Free(id)
	return nil
}

// Len returns the number of subscriptions.
func (x *Index) Len() int { return x.slots.Len() }

// Match counts, per subscription, the predicates the event satisfies and
// appends the subscriptions whose count reaches their predicate count.
func (x *Index) Match(e match.Event, dst []match.ID) []match.ID {
	clear(x.count)
	x.hits = x.hits[:0]
	count, need := x.count, x.need
	visit := func(run []uint32) {
		for _, s := range run {
			c := count[s] + 1
			count[s] = c
			if c == need[s] {
				x.hits = append(x.hits, s)
			}
		}
	}
	for i := range e.Len() {
		at := e.At(i)
		if a := x.attrs[at.Name]; a != nil {
			a.Visit(at.Value, visit)
		}
	}
	for _, s := range x.always {
		dst = append(dst, x.slots.ID(s))
	}
	for _, s := range x.hits {
		dst = append(dst, x.slots.ID(s))
	}
	return dst
}
