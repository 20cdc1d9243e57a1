package bloom

import (
	"slices"
	"sort"

	"github.com/sift-pubsub/sift/match"
)

// chainBlock is the number of entries between two stored unions.
const chainBlock = 32

// chain holds the terms of one operator and one value class on one
// attribute, sorted by value, with the union of their bits stored every
// chainBlock entries from either end. The terms an event value satisfies
// are a prefix, a suffix, a run of equal values or the rest (for !=) of
// the sorted order, because a satisfied one-sided bound implies every
// looser one (the bfposet observation); so the summary needs one stored
// union and fewer than chainBlock single terms per operator.
type chain struct {
	k     int
	words int
	vals  []match.Value
	// fkeys (a numeric chain whose every value has an exact float64) and
	// skeys (a string chain) hold the values as plain keys, so that the
	// searches compare without match.Compare (chain_keys.go).
	fkeys []float64
	skeys []string
	// seq or feq (an == or != chain of at least eqMapMin entries with
	// plain keys) map a key to its run of entries (chain_eq.go).
	seq    map[string]span
	feq    map[float64]span
	pos    []uint32 // k positions per entry
	prefix []uint64 // prefix[b*words:]: union of entries [0, b*chainBlock)
	suffix []uint64 // suffix[b*words:]: union of entries [b*chainBlock, n)
}

type chainEntry struct {
	val match.Value
	pos []uint32
}

func compareValues(a, b match.Value) int {
	c, _ := match.Compare(a, b)
	return c
}

// newChain sorts the entries (all of one value class) and stores the
// block unions.
func newChain(entries []chainEntry, k, words int) *chain {
	slices.SortFunc(entries, func(a, b chainEntry) int { return compareValues(a.val, b.val) })
	ch := &chain{k: k, words: words}
	for _, e := range entries {
		ch.vals = append(ch.vals, e.val)
		ch.pos = append(ch.pos, e.pos...)
	}
	ch.setKeys()
	n := len(entries)
	nb := (n + chainBlock - 1) / chainBlock
	ch.prefix = make([]uint64, (nb+1)*words)
	ch.suffix = make([]uint64, (nb+1)*words)
	for b := 1; b <= nb; b++ {
		cur := ch.prefix[b*words : (b+1)*words]
		copy(cur, ch.prefix[(b-1)*words:b*words])
		ch.setRange(cur, (b-1)*chainBlock, min(b*chainBlock, n))
	}
	for b := nb - 1; b >= 0; b-- {
		cur := ch.suffix[b*words : (b+1)*words]
		copy(cur, ch.suffix[(b+1)*words:(b+2)*words])
		ch.setRange(cur, b*chainBlock, min((b+1)*chainBlock, n))
	}
	return ch
}

// setRange sets the bits of entries [i, j) in dst.
func (ch *chain) setRange(dst []uint64, i, j int) {
	setPositions(dst, ch.pos[i*ch.k:j*ch.k])
}

// lower returns the first index whose value is >= v.
func (ch *chain) lower(v match.Value) int {
	if i, ok := ch.search(v, false); ok {
		return i
	}
	return sort.Search(len(ch.vals), func(i int) bool { return compareValues(ch.vals[i], v) >= 0 })
}

// upper returns the first index whose value is > v.
func (ch *chain) upper(v match.Value) int {
	if i, ok := ch.search(v, true); ok {
		return i
	}
	return sort.Search(len(ch.vals), func(i int) bool { return compareValues(ch.vals[i], v) > 0 })
}

// equal returns the run [lo, hi) of entries equal to v (lo == hi when
// there is none).
func (ch *chain) equal(v match.Value) (lo, hi int) {
	switch {
	case ch.seq != nil && v.Kind() == match.KindString:
		r := ch.seq[v.AsString()]
		return int(r.lo), int(r.hi)
	case ch.feq != nil && v.Kind() != match.KindString:
		if f, ok := match.ExactFloat(v); ok {
			r := ch.feq[f]
			return int(r.lo), int(r.hi)
		}
	}
	lo = ch.lower(v)
	return lo, ch.runEnd(lo, v)
}

// runEnd returns the end of the run of entries equal to v from lo (the
// lower bound of v): a run is short, one entry or a few numbers of
// different kinds, so a scan beats a second search.
func (ch *chain) runEnd(lo int, v match.Value) int {
	hi := lo
	switch {
	case ch.skeys != nil && v.Kind() == match.KindString:
		for s := v.AsString(); hi < len(ch.skeys) && ch.skeys[hi] == s; hi++ {
		}
	default:
		for hi < len(ch.vals) && compareValues(ch.vals[hi], v) == 0 {
			hi++
		}
	}
	return hi
}

// orPrefix sets in dst the bits of entries [0, i).
func (ch *chain) orPrefix(dst []uint64, i int) {
	b := i / chainBlock
	if b > 0 { // prefix[0] is empty
		orWords(dst, ch.prefix[b*ch.words:(b+1)*ch.words])
	}
	ch.setRange(dst, b*chainBlock, i)
}

// orSuffix sets in dst the bits of entries [j, n).
func (ch *chain) orSuffix(dst []uint64, j int) {
	b := (j + chainBlock - 1) / chainBlock
	if b*chainBlock < len(ch.vals) { // the last suffix is empty
		orWords(dst, ch.suffix[b*ch.words:(b+1)*ch.words])
	}
	ch.setRange(dst, j, min(b*chainBlock, len(ch.vals)))
}

// or sets in dst the bits of every entry whose operator op holds for the
// event value v (of the chain's class).
func (ch *chain) or(dst []uint64, op match.Op, v match.Value) {
	switch op {
	case match.OpEq:
		lo, hi := ch.equal(v)
		ch.setRange(dst, lo, hi)
	case match.OpNe: // every entry outside the run of v's
		lo, hi := ch.equal(v)
		ch.orPrefix(dst, lo)
		ch.orSuffix(dst, hi)
	case match.OpLt: // v < c
		ch.orSuffix(dst, ch.upper(v))
	case match.OpLe: // v <= c
		ch.orSuffix(dst, ch.lower(v))
	case match.OpGt: // v > c
		ch.orPrefix(dst, ch.lower(v))
	case match.OpGe: // v >= c
		ch.orPrefix(dst, ch.upper(v))
	}
}
