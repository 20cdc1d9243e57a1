// Package interval turns a filter into the model of REIN and TAMA: one
// numeric interval per constrained attribute. Sift's filters write a range
// as two constraints (`a >= 3 && a <= 9`); the papers' predicates are the
// intervals themselves, so every constraint on one attribute is folded
// into their intersection, which is exactly their conjunction.
package interval

import (
	"github.com/sift-pubsub/sift/baseline"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
)

// Interval is the set of numbers between Lo and Hi on one attribute, each
// end open or closed. An unbounded end is num.NegInf or num.Inf (closed),
// which every finite number passes. Lo > Hi is the empty interval.
type Interval struct {
	Attr           string
	Lo, Hi         num.Key
	LoOpen, HiOpen bool
}

// Holds reports whether the number k lies in the interval.
func (iv *Interval) Holds(k num.Key) bool { return iv.AboveLo(k) && iv.BelowHi(k) }

// AboveLo reports whether k passes the lower end.
func (iv *Interval) AboveLo(k num.Key) bool {
	c := num.Compare(k, iv.Lo)
	return c > 0 || c == 0 && !iv.LoOpen
}

// BelowHi reports whether k passes the upper end.
func (iv *Interval) BelowHi(k num.Key) bool {
	c := num.Compare(k, iv.Hi)
	return c < 0 || c == 0 && !iv.HiOpen
}

// LoBounded and HiBounded report whether an end is finite.
func (iv *Interval) LoBounded() bool { return iv.Lo != num.NegInf }

// HiBounded reports whether the upper end is finite.
func (iv *Interval) HiBounded() bool { return iv.Hi != num.Inf }

// Supported returns nil when c can be part of an interval, or the refusal
// of the named algorithm.
func Supported(algorithm string, c match.Constraint) error {
	switch c.Op {
	case match.OpEq, match.OpLt, match.OpLe, match.OpGt, match.OpGe:
	default:
		return baseline.Unsupported(algorithm, c, "numeric ==, <, <=, >, >= only")
	}
	if _, ok := num.Of(c.Val); !ok {
		return baseline.Unsupported(algorithm, c, "numeric values only")
	}
	return nil
}

// FromFilter returns the intervals of f, one per attribute in f's order,
// or the named algorithm's refusal of its first unsupported constraint.
func FromFilter(algorithm string, f match.Filter) ([]Interval, error) {
	var out []Interval
	for i := range f.Len() {
		c := f.At(i)
		if err := Supported(algorithm, c); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].Attr != c.Attr {
			out = append(out, Interval{Attr: c.Attr, Lo: num.NegInf, Hi: num.Inf})
		}
		narrow(&out[len(out)-1], c)
	}
	return out, nil
}

// narrow intersects iv with constraint c.
func narrow(iv *Interval, c match.Constraint) {
	k, _ := num.Of(c.Val)
	if c.Op == match.OpEq || c.Op == match.OpGt || c.Op == match.OpGe {
		open := c.Op == match.OpGt
		if cmp := num.Compare(k, iv.Lo); cmp > 0 || cmp == 0 && open {
			iv.Lo, iv.LoOpen = k, open
		}
	}
	if c.Op == match.OpEq || c.Op == match.OpLt || c.Op == match.OpLe {
		open := c.Op == match.OpLt
		if cmp := num.Compare(k, iv.Hi); cmp < 0 || cmp == 0 && open {
			iv.Hi, iv.HiOpen = k, open
		}
	}
}
