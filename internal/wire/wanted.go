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
		clear(d.want)
		d.wantFor = d.Wanted
	}
}

// wanted reports whether attribute i, named name, is kept. The name is
// almost always the one interned at position i, whose answer is cached.
func (d *EventDecoder) wanted(i int, name string) bool {
	if d.Wanted == nil {
		return true
	}
	if i >= len(d.last) || d.last[i] != name {
		return d.Wanted.Has(name) // not cached (the name cache was full)
	}
	switch d.want[i] {
	case wantYes:
		return true
	case wantNo:
		return false
	}
	ok := d.Wanted.Has(name)
	d.want[i] = wantNo
	if ok {
		d.want[i] = wantYes
	}
	return ok
}
