package wire

import (
	"slices"
	"strings"
)

// Wanted is an immutable set of attribute names: the attributes an
// EventDecoder keeps (see EventDecoder.Wanted). It is safe for concurrent
// use; a nil *Wanted is the set of all names.
type Wanted struct {
	names []string // sorted, distinct
}

// NewWanted returns the set of names (which it copies; duplicates are
// allowed).
func NewWanted(names []string) *Wanted {
	s := slices.Clone(names)
	slices.Sort(s)
	return &Wanted{names: slices.Compact(s)}
}

// Has reports whether the set holds name (always true for the nil set of
// all names).
func (w *Wanted) Has(name string) bool {
	if w == nil {
		return true
	}
	_, ok := slices.BinarySearch(w.names, name)
	return ok
}

// Names returns the sorted names of the set (nil for all names); the
// caller must not modify them.
func (w *Wanted) Names() []string {
	if w == nil {
		return nil
	}
	return w.names
}

// String lists the names, or says "all".
func (w *Wanted) String() string {
	if w == nil {
		return "all"
	}
	return "{" + strings.Join(w.names, ",") + "}"
}

// wantState caches, per attribute position, whether the decoder keeps the
// name last seen there.
type wantState uint8

const (
	wantUnknown wantState = iota
	wantNo
	wantYes
)

// syncWanted clears the per-position cache when Wanted changed since the
// last event.
func (d *EventDecoder) syncWanted() {
	if d.Wanted != d.wantFor {
		for i := range d.pos {
			d.pos[i].want = wantUnknown
		}
		d.wantFor = d.Wanted
	}
}

// wanted reports whether attribute i, just read (its name is pos[i].name:
// see EventDecoder.ordered), is kept; the answer is cached by position.
func (d *EventDecoder) wanted(i int) bool {
	if w := d.pos[i].want; w != wantUnknown {
		return w == wantYes
	}
	return d.wantedNew(i)
}

// wantedNew answers wanted for a name not yet looked up (every name is
// wanted when Wanted is nil), and caches it.
func (d *EventDecoder) wantedNew(i int) bool {
	p := &d.pos[i]
	ok := d.Wanted.Has(p.name)
	p.want = wantNo
	if ok {
		p.want = wantYes
	}
	return ok
}
