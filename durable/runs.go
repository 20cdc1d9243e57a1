package durable

import "slices"

// runs holds a stream's runs in order as a gap buffer: lo holds the first
// len(lo) runs, hi the rest, both ascending; hi lies at the end of its
// buffer hb, from index hs on, so that runs can join it at either end
// without moving the others. An insert or removal goes in place when that
// moves fewer runs than bringing the gap to it (it is at the end, or
// nearer the end than the gap); otherwise the gap moves there first, one
// copy of the runs it passes. So a stream filled in order at one place
// (an SHB fetching a long outage from its bottom up while the newest
// knowledge is already in, or below a hole at the bottom that an answer
// has not filled yet) pays a constant per run, not a move of every run
// above it, and live knowledge appended at the top meanwhile costs a
// constant too. Dropping runs from the front costs only the runs dropped.
type runs struct {
	lo []run
	hb []run // hi is hb[hs:]
	hs int
}

func (rs *runs) hi() []run { return rs.hb[rs.hs:] }

// len returns the number of runs.
func (rs *runs) len() int { return len(rs.lo) + len(rs.hb) - rs.hs }

// at returns the run at index i (0 <= i < len), to read or change in
// place.
func (rs *runs) at(i int) *run {
	if i < len(rs.lo) {
		return &rs.lo[i]
	}
	return &rs.hb[rs.hs+i-len(rs.lo)]
}

// insert puts r at index i (0 <= i <= len).
func (rs *runs) insert(i int, r run) {
	if g := len(rs.lo); i > g && rs.len()-i < i-g {
		rs.hb = slices.Insert(rs.hb, rs.hs+i-g, r)
		return
	}
	rs.gapAt(i)
	rs.lo = append(rs.lo, r)
}

// remove removes the run at index i (0 <= i < len).
func (rs *runs) remove(i int) {
	if g := len(rs.lo); i > g && rs.len()-1-i < i-g {
		j := rs.hs + i - g
		n := len(rs.hb) - 1
		copy(rs.hb[j:], rs.hb[j+1:])
		rs.hb[n] = run{} // not to keep its event
		rs.hb = rs.hb[:n]
		return
	}
	rs.gapAt(i)
	rs.hb[rs.hs] = run{}
	rs.hs++
	rs.compact()
}

// dropFront removes the first k runs (k <= len).
func (rs *runs) dropFront(k int) {
	if k <= len(rs.lo) {
		clear(rs.lo[:k])
		rs.lo = rs.lo[k:]
		return
	}
	k -= len(rs.lo)
	clear(rs.lo)
	rs.lo = rs.lo[len(rs.lo):]
	clear(rs.hb[rs.hs : rs.hs+k])
	rs.hs += k
	rs.compact()
}

// gapAt moves the gap to index i: afterwards len(lo) == i.
func (rs *runs) gapAt(i int) {
	switch g := len(rs.lo); {
	case i < g:
		k := g - i
		rs.roomBeforeHi(k)
		rs.hs -= k
		copy(rs.hb[rs.hs:], rs.lo[i:])
		clear(rs.lo[i:])
		rs.lo = rs.lo[:i]
	case i > g:
		k := i - g
		rs.lo = append(rs.lo, rs.hb[rs.hs:rs.hs+k]...)
		clear(rs.hb[rs.hs : rs.hs+k])
		rs.hs += k
		rs.compact()
	}
}

// roomBeforeHi makes room for k runs before hi, moving hi to the end of
// a new buffer with at least as much room again as it holds.
func (rs *runs) roomBeforeHi(k int) {
	if rs.hs >= k {
		return
	}
	hi := rs.hi()
	room := max(k, len(hi), 16)
	nb := make([]run, room+len(hi), room+len(hi)+len(hi)/4+1)
	copy(nb[room:], hi)
	rs.hb, rs.hs = nb, room
}

// compact reuses hi's buffer from its start once hi is empty.
func (rs *runs) compact() {
	if rs.hs == len(rs.hb) {
		rs.hb, rs.hs = rs.hb[:0], 0
	}
}
