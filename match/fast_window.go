package match

// slotSpan is the slots [lo, hi) of a segment.
type slotSpan struct{ lo, hi uint32 }

// window is the part of a segment an event can match: at most two slot
// spans, and the word ranges of the fail bitset that cover them. A segment
// without a pivot (see pivotOrder) has one span, all of it; with a pivot,
// only the subscriptions without a point on the pivot dimension and those
// whose point is the event's value can match, and both lie in one span
// each. Matching computes fail words only inside the window (marks of
// single slots may land outside it, where nothing reads them), and reads
// matches only from its spans.
type window struct {
	spans  [2]slotSpan
	words  [2][2]int // [lo, hi) word ranges covering the spans, merged when they meet
	nspans int
	nwords int
	whole  bool // the window is the whole segment
	// point is the pivot point of the event's value, if hasPoint.
	point    pivotPoint
	hasPoint bool
	// pending holds bitsets to OR into the fail words, deferred so that
	// flush ORs them four at a time: one pass over the fail words per
	// four bitsets instead of one per bitset.
	pending  [16][]uint64
	npending int
}

// set makes the window the spans given (ascending, not overlapping; empty
// ones are dropped).
func (w *window) set(spans ...slotSpan) {
	w.nspans, w.nwords, w.whole, w.hasPoint, w.npending = 0, 0, false, false, 0
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

// orWords ORs the window's words of src into dst, the fail words of the
// match: now, or at the latest at the next flush.
func (w *window) orWords(dst, src []uint64) {
	if w.npending == len(w.pending) {
		w.flush(dst)
	}
	w.pending[w.npending] = src
	w.npending++
}

// flush ORs the window's words of the pending bitsets into dst.
func (w *window) flush(dst []uint64) {
	p := w.pending[:w.npending]
	for _, r := range w.words[:w.nwords] {
		lo, hi := r[0], r[1]
		d := dst[lo:hi]
		i := 0
		for ; i+4 <= len(p); i += 4 {
			orWords4(d, p[i][lo:hi], p[i+1][lo:hi], p[i+2][lo:hi], p[i+3][lo:hi])
		}
		switch len(p) - i {
		case 3:
			orWords3(d, p[i][lo:hi], p[i+1][lo:hi], p[i+2][lo:hi])
		case 2:
			orWords2(d, p[i][lo:hi], p[i+1][lo:hi])
		case 1:
			orWords(d, p[i][lo:hi])
		}
	}
	clear(p)
	w.npending = 0
}

// orSlots sets the members of s in dst, at least inside the window.
func (w *window) orSlots(dst []uint64, s slotSet) {
	if s.bits != nil {
		w.orWords(dst, s.bits.Words())
		return
	}
	w.setSlots(dst, s.list)
}

// setSlots sets the bits of the sorted slots in dst, at least inside the
// window.
func (w *window) setSlots(dst []uint64, slots []uint32) {
	for r := range w.nwords {
		for _, s := range w.clip(slots, r) {
			dst[s>>6] |= 1 << (s & 63)
		}
	}
}

// clipMin is the length from which clip cuts a list of slots to a word
// range of the window; below it, binary searches cost more than writing
// the bits outside the window.
const clipMin = 32

// clip returns the slots of the sorted list that fall in the window's
// word range r, or for a short list (or a window of the whole segment) all
// of them once, in range 0, and none in range 1.
func (w *window) clip(slots []uint32, r int) []uint32 {
	if len(slots) < clipMin || w.whole {
		if r > 0 {
			return nil
		}
		return slots
	}
	lo, hi := uint32(w.words[r][0])<<6, uint32(w.words[r][1])<<6
	i := firstAtLeast(slots, lo)
	j := i + firstAtLeast(slots[i:], hi)
	return slots[i:j]
}

// firstAtLeast returns the index of the first slot >= s in a sorted list:
// slices.BinarySearch's index, in 9 ns instead of 13 (200 slots, idle
// 2-core machine), as matching clips lists with it.
func firstAtLeast(slots []uint32, s uint32) int {
	lo, hi := 0, len(slots)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if slots[m] < s {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// orWordsExcept sets in dst, inside the window, the bits of all except
// those of the sorted slots hits.
func (w *window) orWordsExcept(dst, all []uint64, hits []uint32) {
	for r := range w.nwords {
		lo, hi := w.words[r][0], w.words[r][1]
		h := hits[firstAtLeast(hits, uint32(lo)<<6):]
		for i := lo; i < hi; i++ {
			m := all[i]
			for len(h) > 0 && int(h[0]>>6) == i {
				m &^= 1 << (h[0] & 63)
				h = h[1:]
			}
			dst[i] |= m
		}
	}
}

// setSlotsExcept sets in dst, at least inside the window, the bits of the
// sorted slots all except those of the sorted slots hits (a subset).
func (w *window) setSlotsExcept(dst []uint64, all, hits []uint32) {
	h := hits
	for r := range w.nwords {
		for _, s := range w.clip(all, r) {
			for len(h) > 0 && h[0] < s {
				h = h[1:]
			}
			if len(h) > 0 && h[0] == s {
				continue
			}
			dst[s>>6] |= 1 << (s & 63)
		}
	}
}
