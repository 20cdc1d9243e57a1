package durable

// runs holds a stream's runs in order as a gap buffer: lo holds the first
// len(lo) runs ascending, hi the rest in descending order (hi's last
// element is the run right after lo's last). An insert or removal moves
// the gap to its index first, at a cost of the distance the gap moves, so
// a stream filled in order at one place (an SHB fetching a long outage
// from its bottom up while the newest knowledge is already in, or below a
// hole at the bottom that an answer has not filled yet) pays a constant
// per run, not a move of every run above it. Dropping runs from the front
// costs only the runs dropped.
type runs struct {
	lo, hi []run
}

// len returns the number of runs.
func (rs *runs) len() int { return len(rs.lo) + len(rs.hi) }

// at returns the run at index i (0 <= i < len), to read or change in
// place.
func (rs *runs) at(i int) *run {
	if i < len(rs.lo) {
		return &rs.lo[i]
	}
	return &rs.hi[len(rs.hi)-1-(i-len(rs.lo))]
}

// insert puts r at index i (0 <= i <= len).
func (rs *runs) insert(i int, r run) {
	rs.gapAt(i)
	rs.lo = append(rs.lo, r)
}

// remove removes the run at index i (0 <= i < len).
func (rs *runs) remove(i int) {
	rs.gapAt(i)
	n := len(rs.hi) - 1
	rs.hi[n] = run{} // not to keep its event
	rs.hi = rs.hi[:n]
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
	clear(rs.hi[len(rs.hi)-k:])
	rs.hi = rs.hi[:len(rs.hi)-k]
}

// gapAt moves the gap to index i: afterwards len(lo) == i.
func (rs *runs) gapAt(i int) {
	for len(rs.lo) > i {
		n := len(rs.lo) - 1
		rs.hi = append(rs.hi, rs.lo[n])
		rs.lo[n] = run{}
		rs.lo = rs.lo[:n]
	}
	for len(rs.lo) < i {
		n := len(rs.hi) - 1
		rs.lo = append(rs.lo, rs.hi[n])
		rs.hi[n] = run{}
		rs.hi = rs.hi[:n]
	}
}
