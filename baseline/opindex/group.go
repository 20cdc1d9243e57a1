package opindex

import (
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
)

// group holds the predicates on one attribute within one partition, one
// list per operator, each predicate evaluated against the event value.
type group struct {
	nums   [6]numList  // numeric values, by operator (== to >=)
	others []otherPred // string and bool values, prefix, suffix, contains, exists
	n      int
}

// numList holds the numeric predicates of one operator. A constant that
// is exactly a float64 (every float, every int of at most 53 bits) is
// stored as one, in the dense list vals, evaluated with one float
// comparison; the others (ints beyond 2^53 with no float64 equal) keep
// their exact keys in wide.
type numList struct {
	vals      []float64
	slots     []uint32
	wide      []num.Key
	wideSlots []uint32
}

type otherPred struct {
	c match.Constraint
	s uint32
}

// counter is the per-event state the lists update: count[s] starts at
// the number of predicates of slot s and is decremented for each one the
// event satisfies; a slot whose count reaches zero is appended to hits.
type counter struct {
	count []uint16
	hits  []uint32
}

// hit counts one satisfied predicate of slot s.
func (c *counter) hit(s uint32) {
	n := c.count[s] - 1
	c.count[s] = n
	if n == 0 {
		c.hits = append(c.hits, s)
	}
}

// numOp returns the list index of a comparison operator with a numeric
// value, or -1.
func numOp(c match.Constraint) int {
	if c.Op < match.OpEq || c.Op > match.OpGe {
		return -1
	}
	if k := c.Val.Kind(); k != match.KindInt && k != match.KindFloat {
		return -1
	}
	return int(c.Op - match.OpEq)
}

func (g *group) add(c match.Constraint, s uint32) {
	g.n++
	if op := numOp(c); op >= 0 {
		g.nums[op].add(c.Val, s)
		return
	}
	g.others = append(g.others, otherPred{c, s})
}

func (l *numList) add(v match.Value, s uint32) {
	k, _ := num.Of(v)
	if k.R == 0 {
		l.vals = append(l.vals, k.F)
		l.slots = append(l.slots, s)
		return
	}
	l.wide = append(l.wide, k)
	l.wideSlots = append(l.wideSlots, s)
}

func (g *group) remove(c match.Constraint, s uint32) {
	g.n--
	if op := numOp(c); op >= 0 {
		g.nums[op].remove(c.Val, s)
		return
	}
	for i, p := range g.others {
		if p.s == s && p.c == c {
			g.others = append(g.others[:i], g.others[i+1:]...)
			return
		}
	}
}

func (l *numList) remove(v match.Value, s uint32) {
	k, _ := num.Of(v)
	if k.R == 0 {
		for i := range l.slots {
			if l.slots[i] == s && l.vals[i] == k.F {
				l.vals = append(l.vals[:i], l.vals[i+1:]...)
				l.slots = append(l.slots[:i], l.slots[i+1:]...)
				return
			}
		}
		return
	}
	for i := range l.wideSlots {
		if l.wideSlots[i] == s && l.wide[i] == k {
			l.wide = append(l.wide[:i], l.wide[i+1:]...)
			l.wideSlots = append(l.wideSlots[:i], l.wideSlots[i+1:]...)
			return
		}
	}
}

// match counts, in c, every predicate of the group that value v
// satisfies.
func (g *group) match(v match.Value, c *counter) {
	if k, ok := num.Of(v); ok {
		for op := range g.nums {
			g.nums[op].match(op, k, c)
		}
	}
	for _, p := range g.others {
		if p.c.Holds(v, true) {
			c.hit(p.s)
		}
	}
}

// match counts the predicates `k op constant` that hold; op indexes ==,
// !=, <, <=, >, >=. The dense float list is compared as floats when k is
// itself a float64 (R == 0), which is exact; otherwise, and for the wide
// constants, keys are compared exactly.
func (l *numList) match(op int, k num.Key, c *counter) {
	if k.R == 0 {
		l.matchFloat(op, k.F, c)
	} else {
		for i, f := range l.vals {
			if holds(op, k, num.Key{F: f}) {
				c.hit(l.slots[i])
			}
		}
	}
	for i, key := range l.wide {
		if holds(op, k, key) {
			c.hit(l.wideSlots[i])
		}
	}
}

// matchFloat is match's common case, one loop per operator so that the
// comparison is the loop's only test. Neither side is NaN (Sift's values
// exclude it), so `!(a < b)` is `a >= b`.
func (l *numList) matchFloat(op int, v float64, c *counter) {
	slots := l.slots[:len(l.vals)]
	switch op {
	case 0:
		for i, f := range l.vals {
			if v == f {
				c.hit(slots[i])
			}
		}
	case 1:
		for i, f := range l.vals {
			if v != f {
				c.hit(slots[i])
			}
		}
	case 2:
		for i, f := range l.vals {
			if v < f {
				c.hit(slots[i])
			}
		}
	case 3:
		for i, f := range l.vals {
			if v <= f {
				c.hit(slots[i])
			}
		}
	case 4:
		for i, f := range l.vals {
			if v > f {
				c.hit(slots[i])
			}
		}
	default:
		for i, f := range l.vals {
			if v >= f {
				c.hit(slots[i])
			}
		}
	}
}

// holds reports whether `k op key` holds, exactly.
func holds(op int, k, key num.Key) bool {
	switch op {
	case 0:
		return k == key
	case 1:
		return k != key
	case 2:
		return num.Less(k, key)
	case 3:
		return !num.Less(key, k)
	case 4:
		return num.Less(key, k)
	}
	return !num.Less(k, key)
}
