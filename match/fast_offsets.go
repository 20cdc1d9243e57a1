package match

import (
	"cmp"
	"math"
	"slices"
)

// Interval bounds as 16-bit offsets. Most numeric workloads bound integers
// (prices in cents, counters, HEM's values in [0, 10^6)), and the keys of
// a cell's bound list lie between two cell boundaries, so they form one
// or a few runs of keys within 65,535 of the run's first. A packed list
// stores each key as its offset from its run's base in 2 bytes instead of
// a float32 (4) or float64 (8): at 10^7 HEM subscriptions of 20 bounds
// each, 400 MB less. The cut of an event value is then an integer search:
// the value's floor picks the run and the offset, and whether the value
// is an integer decides the equal keys (see cutOffsets).

// offRun is a run of a packed list: keys off[start:] (up to the next
// run's start) are base+off[i].
type offRun struct {
	base  float64
	start int32
}

// maxOffsetKey bounds the magnitude of the keys of a packed list, so that
// every key and base+65,535 are integers a float64 holds exactly and any
// number a float64 does not hold (an int64 beyond 2^53) lies outside
// every packed list's range.
const maxOffsetKey = 1 << 52

// packOffsets packs the keys of every list whose keys are all integers
// (integerKeys), and gives every other list its own copy of its keys, so
// that the array the lists were split from is no longer held.
func packOffsets[K cmp.Ordered](lists ...[]boundList[K]) {
	some := false
	for _, ls := range lists {
		for i := range ls {
			some = some || integerKeys(ls[i].keys)
		}
	}
	if !some {
		return
	}
	for _, ls := range lists {
		for i := range ls {
			b := &ls[i]
			if !integerKeys(b.keys) {
				b.keys = slices.Clone(b.keys)
				continue
			}
			b.off = make([]uint16, len(b.keys))
			for j, k := range b.keys {
				f := keyFloat(k)
				if len(b.runs) == 0 || f-b.runs[len(b.runs)-1].base > math.MaxUint16 {
					b.runs = append(b.runs, offRun{base: f, start: int32(j)})
				}
				b.off[j] = uint16(f - b.runs[len(b.runs)-1].base)
			}
			b.runs = slices.Clip(b.runs)
			b.keys = nil
		}
	}
}

// integerKeys reports whether numeric keys are all integers of magnitude
// below maxOffsetKey (and there is at least one).
func integerKeys[K cmp.Ordered](keys []K) bool {
	if len(keys) == 0 {
		return false
	}
	switch any(keys[0]).(type) {
	case float32, float64:
	default:
		return false
	}
	for _, k := range keys {
		if f := keyFloat(k); f != math.Trunc(f) || f <= -maxOffsetKey || f >= maxOffsetKey {
			return false
		}
	}
	return true
}

// floatKey returns f as a numeric key type (exactly, for the integers
// packed lists hold).
func floatKey[K cmp.Ordered](f float64) K {
	var k K
	switch p := any(&k).(type) {
	case *float64:
		*p = f
	case *float32:
		*p = float32(f)
	}
	return k
}

// runOf returns the run holding key i of a packed list.
func runOf(runs []offRun, i int) int {
	r := 0
	for r+1 < len(runs) && int(runs[r+1].start) <= i {
		r++
	}
	return r
}

// cutOffsets is probe.cut over a packed list. The value's floor fl picks
// the last run whose base is at most fl (none: every key is above the
// value); keys of later runs are above fl, so the cut lies in that run,
// or at its end when fl is beyond its 65,535 offsets. Within the run, for
// an integer value the keys below are those with offset below fl-base and
// the equal ones those at it; for a value strictly between two integers
// none is equal and those below are the keys at most fl.
func cutOffsets[K cmp.Ordered](b *boundList[K], p *probe[K]) boundCut {
	n := int32(len(b.off))
	var f float64
	if p.inexact {
		var exact bool
		if f, exact = exactFloat(*p.v); !exact {
			// An int64 beyond 2^53: beyond every packed key.
			if f > 0 {
				return boundCut{n, n}
			}
			return boundCut{}
		}
	} else {
		f = keyFloat(p.key)
	}
	fl := math.Floor(f)
	r := len(b.runs) - 1
	for r >= 0 && b.runs[r].base > fl {
		r--
	}
	if r < 0 {
		return boundCut{}
	}
	start, end := b.runs[r].start, n
	if r+1 < len(b.runs) {
		end = b.runs[r+1].start
	}
	if fl-b.runs[r].base > math.MaxUint16 {
		return boundCut{end, end}
	}
	off := b.off[start:end]
	q := uint16(fl - b.runs[r].base)
	if fl != f {
		above := start + int32(firstAbove16(off, q))
		return boundCut{above, above}
	}
	// One search, then the (short) run of equal keys, as probe.cut does.
	i := firstAtLeast16(off, q)
	j := i
	for j < len(off) && off[j] == q {
		j++
	}
	return boundCut{start + int32(i), start + int32(j)}
}

// firstAtLeast16 returns the index of the first offset >= q (ascending).
func firstAtLeast16(off []uint16, q uint16) int {
	lo, hi := 0, len(off)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if off[m] < q {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// firstAbove16 returns the index of the first offset > q (ascending).
func firstAbove16(off []uint16, q uint16) int {
	lo, hi := 0, len(off)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if off[m] <= q {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
