// Package preds is the operator index of one attribute shared by the
// counting matchers (forward counting and OpIndex): for each operator and
// value type, the predicates (constraint, subscription slot) organised so
// that the ones an event value satisfies come out as a few runs of slots:
// a hash table for ==, sorted lists for the orderings (a prefix or suffix
// satisfies), the != list minus the run of equal keys, and lists that are
// evaluated one by one for prefix, suffix and contains.
package preds

import (
	"strings"

	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
)

// Attr holds the predicates on one attribute.
type Attr struct {
	num     ordered[num.Key] // int and float values
	boolean ordered[num.Key] // false as 0, true as 1
	str     ordered[string]
	strOps  [3]strList // prefix, suffix, contains
	exists  []uint32
	n       int
	scratch []uint32
}

// ordered holds the comparison predicates of one value type.
type ordered[K comparable] struct {
	eq                 map[K][]uint32
	ne, lt, le, gt, ge sorted[K]
}

type strList struct {
	vals  []string
	slots []uint32
}

// New returns an empty attribute index.
func New() *Attr {
	a := &Attr{}
	a.num.init(num.Less)
	a.boolean.init(num.Less)
	a.str.init(func(x, y string) bool { return x < y })
	return a
}

func (o *ordered[K]) init(less func(a, b K) bool) {
	o.eq = make(map[K][]uint32)
	for _, l := range []*sorted[K]{&o.ne, &o.lt, &o.le, &o.gt, &o.ge} {
		l.less = less
	}
}

// Len returns the number of predicates held.
func (a *Attr) Len() int { return a.n }

// Add stores constraint c of the subscription in slot s; c names this
// attribute and is valid.
func (a *Attr) Add(c match.Constraint, s uint32) {
	a.n++
	switch c.Op {
	case match.OpExists:
		a.exists = append(a.exists, s)
		return
	case match.OpPrefix, match.OpSuffix, match.OpContains:
		l := &a.strOps[c.Op-match.OpPrefix]
		l.vals = append(l.vals, c.Val.AsString())
		l.slots = append(l.slots, s)
		return
	}
	switch c.Val.Kind() {
	case match.KindString:
		a.str.add(c.Op, c.Val.AsString(), s)
	case match.KindBool:
		a.boolean.add(c.Op, boolKey(c.Val), s)
	default:
		k, _ := num.Of(c.Val)
		a.num.add(c.Op, k, s)
	}
}

// Remove deletes constraint c of slot s; it reports whether it was there.
func (a *Attr) Remove(c match.Constraint, s uint32) bool {
	ok := false
	switch c.Op {
	case match.OpExists:
		a.exists, ok = removeSlot(a.exists, s)
	case match.OpPrefix, match.OpSuffix, match.OpContains:
		l := &a.strOps[c.Op-match.OpPrefix]
		for i := range l.slots {
			if l.slots[i] == s && l.vals[i] == c.Val.AsString() {
				l.vals = append(l.vals[:i], l.vals[i+1:]...)
				l.slots = append(l.slots[:i], l.slots[i+1:]...)
				ok = true
				break
			}
		}
	default:
		switch c.Val.Kind() {
		case match.KindString:
			ok = a.str.remove(c.Op, c.Val.AsString(), s)
		case match.KindBool:
			ok = a.boolean.remove(c.Op, boolKey(c.Val), s)
		default:
			k, _ := num.Of(c.Val)
			ok = a.num.remove(c.Op, k, s)
		}
	}
	if ok {
		a.n--
	}
	return ok
}

// Visit calls visit with runs of slots, one slot per predicate on this
// attribute that the event value v satisfies (a slot appears once per
// satisfied predicate of its subscription). A run is valid only during
// the call.
func (a *Attr) Visit(v match.Value, visit func(slots []uint32)) {
	if len(a.exists) > 0 {
		visit(a.exists)
	}
	switch v.Kind() {
	case match.KindString:
		s := v.AsString()
		a.str.visit(s, visit)
		a.scratch = a.scratch[:0]
		for op, l := range a.strOps {
			for i, p := range l.vals {
				if holdsStr(match.OpPrefix+match.Op(op), s, p) {
					a.scratch = append(a.scratch, l.slots[i])
				}
			}
		}
		if len(a.scratch) > 0 {
			visit(a.scratch)
		}
	case match.KindBool:
		a.boolean.visit(boolKey(v), visit)
	default:
		k, _ := num.Of(v)
		a.num.visit(k, visit)
	}
}

func holdsStr(op match.Op, s, p string) bool {
	switch op {
	case match.OpPrefix:
		return strings.HasPrefix(s, p)
	case match.OpSuffix:
		return strings.HasSuffix(s, p)
	}
	return strings.Contains(s, p)
}

func boolKey(v match.Value) num.Key {
	if v.AsBool() {
		return num.Key{F: 1}
	}
	return num.Key{}
}

func (o *ordered[K]) list(op match.Op) *sorted[K] {
	switch op {
	case match.OpNe:
		return &o.ne
	case match.OpLt:
		return &o.lt
	case match.OpLe:
		return &o.le
	case match.OpGt:
		return &o.gt
	}
	return &o.ge
}

func (o *ordered[K]) add(op match.Op, k K, s uint32) {
	if op == match.OpEq {
		o.eq[k] = append(o.eq[k], s)
		return
	}
	o.list(op).add(k, s)
}

func (o *ordered[K]) remove(op match.Op, k K, s uint32) bool {
	if op != match.OpEq {
		return o.list(op).remove(k, s)
	}
	rest, ok := removeSlot(o.eq[k], s)
	if len(rest) == 0 {
		delete(o.eq, k)
	} else {
		o.eq[k] = rest
	}
	return ok
}

// visit reports the runs satisfied by an event value of key k: the
// predicate `v op c` holds for the keys c on one side of k.
func (o *ordered[K]) visit(k K, visit func([]uint32)) {
	if ss := o.eq[k]; len(ss) > 0 {
		visit(ss)
	}
	run := func(l *sorted[K], lo, hi int) {
		if lo < hi {
			visit(l.slots[lo:hi])
		}
	}
	for _, l := range []*sorted[K]{&o.ne, &o.lt, &o.le, &o.gt, &o.ge} {
		l.settle()
	}
	run(&o.lt, o.lt.upperBound(k), len(o.lt.keys)) // k < c
	run(&o.le, o.le.lowerBound(k), len(o.le.keys)) // k <= c
	run(&o.gt, 0, o.gt.lowerBound(k))              // k > c
	run(&o.ge, 0, o.ge.upperBound(k))              // k >= c
	run(&o.ne, 0, o.ne.lowerBound(k))
	run(&o.ne, o.ne.upperBound(k), len(o.ne.keys))
}

func removeSlot(ss []uint32, s uint32) ([]uint32, bool) {
	for i, x := range ss {
		if x == s {
			return append(ss[:i], ss[i+1:]...), true
		}
	}
	return ss, false
}
