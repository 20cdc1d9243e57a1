package match

// slotSpan is the slots [lo, hi) of a segment.
type slotSpan struct{ lo, hi uint32 }

// window is the part of a segment an event can match: at most two slot
// spans, and the word ranges of the fail bitset that cover them. A segment
// without a pivot (see pivotOrder) has one span, all of it; with a pivot,
// only the subscriptions without a point on the pivot dimension and those
// whose point is the event's value can match, and both lie in one span
// each. Matching computes fail words only inside the window, and reads
// matches only from its spans.
type window struct {
	spans  [2]slotSpan
	words  [2][2]int // [lo, hi) word ranges covering the spans, merged when they meet
	nspans int
	nwords int
}

// set makes the window the spans given (ascending, not overlapping; empty
// ones are dropped).
func (w *window) set(spans ...slotSpan) {
	w.nspans, w.nwords = 0, 0
	for _, s := range spans {
		if s.lo >= s.hi {
			continue
		}
		w.spans[w.nspans] = s
		w.nspans++
		lo, hi := int(s.lo>>6), int((s.hi+63)>>6)
		if w.nwords > 0 && lo <= w.words[w.nwords-1][1] {
			w.words[w.nwords-1][1] = hi
			continue
		}
		w.words[w.nwords] = [2]int{lo, hi}
		w.nwords++
	}
}

// orWords ORs the window's words of src into dst.
func (w *window) orWords(dst, src []uint64) {
	for _, r := range w.words[:w.nwords] {
		orWords(dst[r[0]:r[1]], src[r[0]:r[1]])
	}
}

// orSlots sets the members of s in dst: for a bitset, only the window's
// words; a sorted list costs one write per member wherever it is.
func (w *window) orSlots(dst []uint64, s slotSet) {
	if s.bits != nil {
		w.orWords(dst, s.bits.Words())
		return
	}
	for _, slot := range s.list {
		dst[slot>>6] |= 1 << (slot & 63)
	}
}

// orAndNot sets in dst, inside the window, the bits of all that are not
// in pass.
func (w *window) orAndNot(dst, all, pass []uint64) {
	for _, r := range w.words[:w.nwords] {
		d, a, p := dst[r[0]:r[1]], all[r[0]:r[1]], pass[r[0]:r[1]]
		for i, x := range a {
			d[i] |= x &^ p[i]
		}
	}
}
