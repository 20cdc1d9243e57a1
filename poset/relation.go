package poset

import (
	"math"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
)

// key is a filter with what the structures' covering relation needs to know
// about it, computed once. The fields RTO reads for every node it looks
// at come first, at the node's start (its first cache line).
type key struct {
	exact bool // every constraint lies in the complete fragment
	empty bool // the match-all filter
	// simple: the box has at most a string-equality span (eqAttr) and a
	// numeric span (numAttr, [lo, hi]) and nothing else, so disjoint
	// decides from these fields alone; set by the structure (sign)
	simple bool
	// first string equality of box: attribute id interned by the
	// structure (0: none, or a key made outside one) and value hash
	eqAttr int32
	// the numeric span of a simple key: attribute id (0: none) and interval
	numAttr int32
	nbox    int32 // spans in the box (boxp)
	eqHash  uint64
	lo, hi  float64
	mask    uint64 // attribute mask (exact, non-empty filters)
	f       match.Filter
	// box over-approximates f per attribute (exact, non-empty filters):
	// nbox spans from boxp (see box). A simple key keeps none: its fields
	// and f say all a box would (see spans), and most filters a router
	// holds are simple, the box's allocation a third of what their node
	// cost. A pointer and a count rather than a slice: the slice's 16
	// bytes more took the node to the next size class.
	boxp *span
}

// box returns k's box as kept (nil for a simple key; see spans).
func (k *key) box() []span { return unsafe.Slice(k.boxp, k.nbox) }

// setBox keeps box as k's box.
func (k *key) setBox(box []span) {
	k.boxp, k.nbox = unsafe.SliceData(box), int32(len(box))
}

// spans returns k's box: k.box, or for a simple key, which keeps none,
// the spans boxOf would give, built in buf.
func (k *key) spans(buf *[2]span) []span {
	if !k.simple {
		return k.box()
	}
	return k.simpleSpans(buf)
}

// simpleSpans rebuilds the box of simple key k in buf: a span per
// attribute of k.f (at most two: the string equality's and the numeric
// one's), with the strings of its constraints recorded as boxOf records
// them, and the numeric interval k keeps (the number hull boxOf computes)
// on the attribute without an equality; the equality's attribute has no
// numeric bound (sign).
func (k *key) simpleSpans(buf *[2]span) []span {
	box := buf[:0]
	for i := range k.f.Len() {
		c := k.f.At(i)
		if len(box) == 0 || box[len(box)-1].attr != c.Attr {
			box = append(box, span{attr: c.Attr, lo: math.Inf(-1), hi: math.Inf(1)})
		}
		if c.Val.Kind() == match.KindString {
			box[len(box)-1].addString(c.Op, c.Val.AsString())
		}
	}
	for i := range box {
		if !box[i].hasEq {
			box[i].lo, box[i].hi = k.lo, k.hi
		}
	}
	return box
}

func newKey(f match.Filter) key {
	k := key{f: f, exact: inCompleteFragment(f), empty: f.Len() == 0}
	if k.exact && !k.empty {
		k.mask = attrMask(f)
		k.setBox(boxOf(f))
	}
	return k
}

// inCompleteFragment reports whether every constraint of f uses an operator
// for which match.Covers is complete: ==, !=, <, <=, >, >=, prefix and
// exists, on any value type. suffix and contains are outside.
func inCompleteFragment(f match.Filter) bool {
	for i := range f.Len() {
		switch f.At(i).Op {
		case match.OpSuffix, match.OpContains:
			return false
		}
	}
	return true
}

// Covers is the covering relation every structure in this package uses:
// Covers(a, b) reports that a covers b. It is match.Covers restricted so that
// it is transitive (see the package documentation):
//
//   - the match-all filter covers every filter;
//   - a filter covers an Equal filter;
//   - otherwise a covers b only when both lie in the complete fragment
//     (no suffix or contains constraint) and match.Covers(a, b) holds.
//
// It is sound: Covers(a, b) implies that every event matching b matches a.
// Both filters must be satisfiable (match.Satisfiable); the structures keep
// unsatisfiable filters aside.
func Covers(a, b match.Filter) bool {
	ka, kb := newKey(a), newKey(b)
	return relates(&ka, &kb)
}

func relates(a, b *key) bool {
	if a.empty || a.f.Equal(b.f) {
		return true
	}
	if !a.exact || !b.exact || b.empty {
		return false
	}
	// Cheap necessary conditions first: a's attributes among b's, and b's
	// box inside a's.
	if a.mask&^b.mask != 0 || !keyContains(a, b) {
		return false
	}
	return match.Covers(a.f, b.f)
}

// keyContains is boxContains of a's box and b's: from their fields alone
// when both keys are simple (simpleContains).
func keyContains(a, b *key) bool {
	if a.simple && b.simple {
		return simpleContains(a, b)
	}
	var ba, bb [2]span
	return boxContains(a.spans(&ba), b.spans(&bb))
}

// simpleContains is boxContains for simple keys a and b, decided from
// their fields: b constrains a's equality attribute, and a's interval
// holds b's there, and where both require a string equality on one
// attribute the values' hashes agree (so it may say true where the
// boxes would not, when two values' hashes collide: it is a necessary
// condition for covering, as boxContains is).
func simpleContains(a, b *key) bool {
	return spanMayCover(a.eqAttr, math.Inf(-1), math.Inf(1), b) &&
		spanMayCover(a.numAttr, a.lo, a.hi, b) &&
		(a.eqAttr == 0 || a.eqAttr != b.eqAttr || a.eqHash == b.eqHash)
}

// mayCover is relates without its covering test: false only when a cannot
// cover b (b leaves unconstrained an attribute of a, or b's box leaves
// a's). It is not counted as a covering test and never calls match.Covers.
// Simple keys decide from their fields alone, as their boxes would.
func mayCover(a, b *key) bool {
	if a.simple && b.simple {
		return simpleContains(a, b)
	}
	if a.empty || !a.exact || !b.exact || b.empty {
		return true
	}
	return a.mask&^b.mask == 0 && keyContains(a, b)
}

// spanMayCover reports whether simple key b constrains attribute attr
// (0: none, trivially true) within [lo, hi].
func spanMayCover(attr int32, lo, hi float64, b *key) bool {
	switch attr {
	case 0:
		return true
	case b.numAttr:
		return lo <= b.lo && b.hi <= hi
	case b.eqAttr:
		return math.IsInf(lo, -1) && math.IsInf(hi, 1)
	}
	return false
}

// disjoint is a cheap sufficient condition for two filters to match no
// common event: on some attribute both constrain, their numeric intervals
// do not meet or their string equalities differ. It is not a covering
// test (no match.Covers call; it is not counted): RTO uses it to leave out
// of a vector filters that can be neither above nor below the new one.
func disjoint(a, b *key) bool {
	if a.simple && b.simple {
		return a.eqAttr != 0 && a.eqAttr == b.eqAttr && a.eqHash != b.eqHash ||
			a.numAttr != 0 && a.numAttr == b.numAttr && (a.hi < b.lo || b.hi < a.lo)
	}
	if !a.exact || !b.exact || a.mask&b.mask == 0 {
		return false
	}
	if a.eqAttr != 0 && a.eqAttr == b.eqAttr && a.eqHash != b.eqHash {
		return true // the same attribute equal to different strings
	}
	var ba, bb [2]span
	abox, bbox := a.spans(&ba), b.spans(&bb)
	j := 0
	for i := range abox {
		s := &abox[i]
		for j < len(bbox) && bbox[j].attr < s.attr {
			j++
		}
		if j == len(bbox) {
			return false
		}
		t := &bbox[j]
		if t.attr != s.attr {
			continue
		}
		if s.hi < t.lo || t.hi < s.lo || s.hasEq && t.hasEq && s.str != t.str {
			return true
		}
	}
	return false
}
