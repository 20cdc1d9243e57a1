package opindex

import (
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
)

// group holds the predicates on one attribute within one partition, one
// list per operator, each predicate evaluated against the event value.
type group struct {
	nums    [6]numList  // numeric values, by operator (== to >=)
	others  []otherPred // string and bool values, prefix, suffix, contains, exists
	n       int
	scratch []uint32
}

// numList holds the numeric predicates of one operator.
type numList struct {
	keys  []num.Key
	slots []uint32
}

type otherPred struct {
	c match.Constraint
	s uint32
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
		k, _ := num.Of(c.Val)
		l := &g.nums[op]
		l.keys = append(l.keys, k)
		l.slots = append(l.slots, s)
		return
	}
	g.others = append(g.others, otherPred{c, s})
}

func (g *group) remove(c match.Constraint, s uint32) {
	g.n--
	if op := numOp(c); op >= 0 {
		k, _ := num.Of(c.Val)
		l := &g.nums[op]
		for i := range l.slots {
			if l.slots[i] == s && l.keys[i] == k {
				l.keys = append(l.keys[:i], l.keys[i+1:]...)
				l.slots = append(l.slots[:i], l.slots[i+1:]...)
				return
			}
		}
		return
	}
	for i, p := range g.others {
		if p.s == s && p.c == c {
			g.others = append(g.others[:i], g.others[i+1:]...)
			return
		}
	}
}

// satisfied returns the slots, one per predicate, that value v
// satisfies; the slice is valid until the next call.
func (g *group) satisfied(v match.Value) []uint32 {
	out := g.scratch[:0]
	if k, ok := num.Of(v); ok {
		for op := range g.nums {
			out = g.nums[op].satisfied(op, k, out)
		}
	}
	for _, p := range g.others {
		if p.c.Holds(v, true) {
			out = append(out, p.s)
		}
	}
	g.scratch = out
	return out
}

// satisfied appends the slots of the predicates `k op key` that hold; op
// indexes ==, !=, <, <=, >, >=. One loop per operator keeps the test
// out of the loop.
func (l *numList) satisfied(op int, k num.Key, out []uint32) []uint32 {
	switch op {
	case 0:
		for i, key := range l.keys {
			if k == key {
				out = append(out, l.slots[i])
			}
		}
	case 1:
		for i, key := range l.keys {
			if k != key {
				out = append(out, l.slots[i])
			}
		}
	case 2:
		for i, key := range l.keys {
			if num.Less(k, key) {
				out = append(out, l.slots[i])
			}
		}
	case 3:
		for i, key := range l.keys {
			if !num.Less(key, k) {
				out = append(out, l.slots[i])
			}
		}
	case 4:
		for i, key := range l.keys {
			if num.Less(key, k) {
				out = append(out, l.slots[i])
			}
		}
	default:
		for i, key := range l.keys {
			if !num.Less(k, key) {
				out = append(out, l.slots[i])
			}
		}
	}
	return out
}
