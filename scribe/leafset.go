package scribe

// leafSet holds up to half nodes on each side of its owner on the ring, each
// side sorted nearest first. In a network of at most |L| other nodes a node
// may sit on both sides.
type leafSet struct {
	half int
	cw   []Ref // larger ids: clockwise distance from the owner
	ccw  []Ref // smaller ids: counter-clockwise distance from the owner
}

func newLeafSet(size int) leafSet {
	half := size / 2
	return leafSet{half: half, cw: make([]Ref, 0, half), ccw: make([]Ref, 0, half)}
}

// consider inserts r on each side where it is among the half nearest, and
// reports whether it was inserted anywhere.
func (l *leafSet) consider(self ID, r Ref) bool {
	var in bool
	l.cw, in = insertSide(l.cw, l.half, r, func(x ID) ID { return x.Sub(self) })
	var in2 bool
	l.ccw, in2 = insertSide(l.ccw, l.half, r, func(x ID) ID { return self.Sub(x) })
	return in || in2
}

func insertSide(side []Ref, half int, r Ref, dist func(ID) ID) ([]Ref, bool) {
	d := dist(r.ID)
	pos := len(side)
	for i, x := range side {
		if x.Addr == r.Addr {
			return side, false
		}
		if pos == len(side) && d.Less(dist(x.ID)) {
			pos = i
		}
	}
	if pos >= half {
		return side, false
	}
	if len(side) < half {
		side = append(side, Ref{})
	}
	copy(side[pos+1:], side[pos:len(side)-1])
	side[pos] = r
	return side, true
}

// remove deletes a from both sides and reports which sides held it.
func (l *leafSet) remove(a Addr) (cw, ccw bool) {
	l.cw, cw = removeRef(l.cw, a)
	l.ccw, ccw = removeRef(l.ccw, a)
	return cw, ccw
}

func removeRef(side []Ref, a Addr) ([]Ref, bool) {
	for i, x := range side {
		if x.Addr == a {
			return append(side[:i], side[i+1:]...), true
		}
	}
	return side, false
}

// covers reports whether key lies within the range the leaf set spans. When
// the two sides share a node they meet around the ring: the owner knows the
// whole ring and every key is covered. A side emptied by failures spans
// nothing beyond the owner until it is repaired.
func (l *leafSet) covers(self, key ID) bool {
	if l.wraps() {
		return true
	}
	lo, hi := self, self
	if len(l.ccw) > 0 {
		lo = l.ccw[len(l.ccw)-1].ID
	}
	if len(l.cw) > 0 {
		hi = l.cw[len(l.cw)-1].ID
	}
	return !hi.Sub(lo).Less(key.Sub(lo))
}

// wraps reports whether the two sides share a node: they meet around the
// ring, so the owner knows every node.
func (l *leafSet) wraps() bool {
	for _, x := range l.cw {
		for _, y := range l.ccw {
			if x.Addr == y.Addr {
				return true
			}
		}
	}
	return false
}

// closest returns the node among self and the leaf set numerically closest to key.
func (l *leafSet) closest(self Ref, key ID) Ref {
	best := self
	for _, side := range [2][]Ref{l.cw, l.ccw} {
		for _, x := range side {
			if Closer(key, x.ID, best.ID) {
				best = x
			}
		}
	}
	return best
}

// farthest returns the farthest entry of a side, for leaf set repair.
func farthest(side []Ref) (Ref, bool) {
	if len(side) == 0 {
		return None, false
	}
	return side[len(side)-1], true
}
