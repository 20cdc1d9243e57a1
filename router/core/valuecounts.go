package core

import "math/bits"

// valueCounts counts, per value hash (linkCache.valueHash), the equalities
// of the held filters that name a string of that hash on one attribute
// (keyedFilters.strs): an open-addressing table of 8-byte words, each a
// hash and its count, probed linearly, at most 2/3 full.
//
// Why not a map[uint64]int: an upstream router holds about one distinct
// key value per filter (topic and symbol filters), and the map's 16-byte
// slots in groups sized by powers of two were ~40 bytes per held filter;
// here a value costs 8 bytes at 1/3 to 2/3 load. The hash is 32 bits:
// values that share one are counted together, which can only keep an
// event from the cache's negative answer (see linkCache), never give it
// wrongly.
type valueCounts struct {
	words []uint64 // hash<<32 | count; 0 is empty (a held count is never 0)
	shift uint8    // 64 - log2(len(words))
	n     int      // hashes held
}

// home returns the position where hash h's probe starts: Fibonacci
// hashing, so that hashes a test chose (small integers, one length per
// bucket) spread as the seeded ones do.
func (t *valueCounts) home(h uint32) int {
	return int((uint64(h) * 0x9e3779b97f4a7c15) >> t.shift)
}

// next returns the position after i.
func (t *valueCounts) next(i int) int { return (i + 1) & (len(t.words) - 1) }

// find returns the position holding hash h, or that of the empty word
// its probe stopped at.
func (t *valueCounts) find(h uint32) (int, bool) {
	for i := t.home(h); ; i = t.next(i) {
		switch w := t.words[i]; {
		case w == 0:
			return i, false
		case uint32(w>>32) == h:
			return i, true
		}
	}
}

// get returns the count of hash h (0: none).
func (t *valueCounts) get(h uint32) int {
	if t.n == 0 {
		return 0
	}
	if i, ok := t.find(h); ok {
		return int(uint32(t.words[i]))
	}
	return 0
}

// add adds delta to the count of hash h and returns the counts before
// and after. A count never goes below zero: removing what was not
// counted is the caller's bug.
func (t *valueCounts) add(h uint32, delta int) (before, after int) {
	if delta == 0 {
		c := t.get(h)
		return c, c
	}
	i, ok := 0, false
	if len(t.words) > 0 {
		i, ok = t.find(h)
	}
	if ok {
		before = int(uint32(t.words[i]))
	}
	after = before + delta
	switch {
	case after < 0 || after > 1<<32-1:
		panic("router: link cache's value counts out of range") // table invariant
	case after == 0 && ok:
		t.remove(i)
	case after > 0 && ok:
		t.words[i] = uint64(h)<<32 | uint64(after)
	case after > 0:
		if (t.n+1)*3 > len(t.words)*2 {
			t.resize(max(8, 2*len(t.words)))
			i, _ = t.find(h)
		}
		t.words[i] = uint64(h)<<32 | uint64(after)
		t.n++
	}
	return before, after
}

// resize places every word again in a table of size positions (a power
// of two, 8 at first).
func (t *valueCounts) resize(size int) {
	old := t.words
	t.words = make([]uint64, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	for _, w := range old {
		if w != 0 {
			i, _ := t.find(uint32(w >> 32))
			t.words[i] = w
		}
	}
}

// remove empties position i, moving back the words after it in its run
// that probed past it, so that no probe stops short of a hash it must
// find (deletion without tombstones). The last hash gone frees the table.
func (t *valueCounts) remove(i int) {
	if t.n--; t.n == 0 {
		t.words, t.shift = nil, 0
		return
	}
	for j := t.next(i); t.words[j] != 0; j = t.next(j) {
		h := t.home(uint32(t.words[j] >> 32))
		// The word at j may move to the hole at i when its home is not
		// in the cyclic range (i, j].
		if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
			t.words[i] = t.words[j]
			i = j
		}
	}
	t.words[i] = 0
}

// len returns the number of hashes counted.
func (t *valueCounts) len() int { return t.n }

// each calls fn on every hash counted.
func (t *valueCounts) each(fn func(h uint32)) {
	for _, w := range t.words {
		if w != 0 {
			fn(uint32(w >> 32))
		}
	}
}
