package match

import (
	"math"
	"math/bits"

	"github.com/bits-and-blooms/bitset"
)

// segment is an immutable batch of subscriptions indexed for backward
// matching: for each attribute it can mark, in one pass over a bitset per
// attribute plus a few bounds near the event's value, every subscription the
// event fails; the live subscriptions left unmarked are the matches.
// Deletes only clear live bits; the index rebuilds segments that are mostly
// dead.
type segment struct {
	num   uint32 // the index's number for the segment, never 0
	n     int    // slots
	ids   []ID   // id by slot, unless every id fits ids32
	ids32 []uint32
	live  *bitset.BitSet
	nlive int
	attrs []segAttr // sorted by name
	// pivot is the index in attrs of the pivot attribute, or -1; the
	// slots [0, rest) have no point on its string dimension (see
	// fast_pivot.go).
	pivot int
	rest  uint32
}

// segAttr is the part of a segment about one attribute.
type segAttr struct {
	name  string
	has   slotSet // every subscription constraining the attribute
	num   *dim[float64]
	num32 *dim[float32] // instead of num when float32 holds every key exactly
	str   *dim[string]
	bool  *dim[float64]
}

func numberKey(v Value) (float64, bool) { return exactFloat(v) }
func stringKey(v Value) (string, bool)  { return v.str, true }
func boolKey(v Value) (float64, bool)   { return float64(v.bits), true }

// words returns the number of 64-bit words a bitset over the segment needs.
func (s *segment) words() int { return (s.n + 63) / 64 }

// id returns the subscription id in a slot.
func (s *segment) id(slot int) ID {
	if s.ids32 != nil {
		return ID(s.ids32[slot])
	}
	return s.ids[slot]
}

// setIDs stores the ids by slot, in 4 bytes each when they all fit.
func (s *segment) setIDs(ids []ID) {
	s.n = len(ids)
	for _, id := range ids {
		if id > math.MaxUint32 {
			s.ids = ids
			return
		}
	}
	s.ids32 = make([]uint32, len(ids))
	for i, id := range ids {
		s.ids32[i] = uint32(id)
	}
}

// match appends the matching ids to dst. fail is a scratch word array of
// at least s.words().
func (s *segment) match(e Event, fail []uint64, dst []ID) []ID {
	if s.nlive == 0 {
		return dst
	}
	nw := s.words()
	fail = fail[:nw]
	clear(fail)
	var win window
	s.window(e, &win)
	ea := e.attrs
	for i := range s.attrs {
		a := &s.attrs[i]
		v := nextValue(&ea, a.name)
		if v == nil {
			win.orSlots(fail, a.has)
			continue
		}
		a.failInto(v, &win, fail)
	}
	win.flush(fail)
	for _, sp := range win.spans[:win.nspans] {
		dst = s.collect(sp, fail, dst)
	}
	return dst
}

// nextValue advances the sorted attributes *ea to name and returns its
// value, or nil. Events usually carry the attributes the segment names, so
// equality is tested first (cheaper than ordering strings).
func nextValue(ea *[]Attr, name string) *Value {
	as := *ea
	for len(as) > 0 {
		if as[0].Name == name {
			*ea = as[1:]
			return &as[0].Value
		}
		if as[0].Name > name {
			break
		}
		as = as[1:]
	}
	*ea = as
	return nil
}

// window sets win to the slots e can match: all of them, or with a pivot
// the subscriptions without a point on it and those wanting e's value.
func (s *segment) window(e Event, win *window) {
	if s.pivot < 0 {
		win.set(slotSpan{0, uint32(s.n)})
		win.whole = true
		return
	}
	rest := slotSpan{0, s.rest}
	a := &s.attrs[s.pivot]
	if v, ok := e.Get(a.name); ok && v.kind == KindString {
		if pt, ok := a.str.points.find(v.str); ok {
			win.set(rest, pt.span)
			win.point, win.hasPoint = pt, true
			return
		}
	}
	win.set(rest)
}

// collect appends the ids of the live slots of span not marked in fail.
func (s *segment) collect(sp slotSpan, fail []uint64, dst []ID) []ID {
	live := s.live.Words()
	first, last := int(sp.lo>>6), int((sp.hi-1)>>6)
	for w := first; w <= last; w++ {
		m := live[w] &^ fail[w]
		if w == first {
			m &= ^uint64(0) << (sp.lo & 63)
		}
		if w == last && sp.hi&63 != 0 {
			m &= 1<<(sp.hi&63) - 1
		}
		if m == 0 {
			continue
		}
		if s.ids32 != nil {
			dst = appendIDs(dst, s.ids32, w<<6, m)
		} else {
			dst = appendIDs(dst, s.ids, w<<6, m)
		}
	}
	return dst
}

// appendIDs appends ids[base+i] for every bit i set in m.
func appendIDs[T uint32 | ID](dst []ID, ids []T, base int, m uint64) []ID {
	ids = ids[base:]
	for m != 0 {
		dst = append(dst, ID(ids[bits.TrailingZeros64(m)]))
		m &= m - 1
	}
	return dst
}

// failInto marks the subscriptions constraining the attribute that value v
// fails, at least inside the window: those of other type classes, and those
// of v's class whose constraints v does not satisfy.
func (a *segAttr) failInto(v *Value, win *window, fail []uint64) {
	cls := v.kind.class()
	if a.num != nil && cls != classNumber {
		win.orSlots(fail, a.num.has)
	}
	if a.num32 != nil && cls != classNumber {
		win.orSlots(fail, a.num32.has)
	}
	if a.str != nil && cls != classString {
		win.orSlots(fail, a.str.has)
	}
	if a.bool != nil && cls != classBool {
		win.orSlots(fail, a.bool.has)
	}
	switch cls {
	case classNumber:
		f, exact := exactFloat(*v)
		if a.num != nil {
			p := probe[float64]{key: f, inexact: !exact, v: v}
			a.num.failInto(&p, win, fail)
		}
		if a.num32 != nil {
			k := float32(f)
			p := probe[float32]{key: k, inexact: !exact || float64(k) != f, v: v}
			a.num32.failInto(&p, win, fail)
		}
	case classString:
		if a.str != nil {
			p := probe[string]{key: v.str, v: v}
			a.str.failInto(&p, win, fail)
		}
	case classBool:
		if a.bool != nil {
			p := probe[float64]{key: float64(v.bits), v: v}
			a.bool.failInto(&p, win, fail)
		}
	}
}

// delete clears a slot's live bit; it reports whether it was live.
func (s *segment) delete(slot uint32) bool {
	if !s.live.Test(uint(slot)) {
		return false
	}
	s.live.Clear(uint(slot))
	s.nlive--
	return true
}

// shareHas lets the attribute's only dimension share the attribute's has set
// when both hold the same subscriptions (one type, no bare `exists`).
func (a *segAttr) shareHas(n int) {
	var dims []*slotSet
	if a.num != nil {
		dims = append(dims, &a.num.has)
	}
	if a.num32 != nil {
		dims = append(dims, &a.num32.has)
	}
	if a.str != nil {
		dims = append(dims, &a.str.has)
	}
	if a.bool != nil {
		dims = append(dims, &a.bool.has)
	}
	if len(dims) == 1 && dims[0].len() == n {
		*dims[0] = a.has
	}
}
