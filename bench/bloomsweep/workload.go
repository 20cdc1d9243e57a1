package bloomsweep

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// constraintsPerFilter is the equalities of each generated filter.
const constraintsPerFilter = 3

// pointWorkload is one point's events and the link's filters.
type pointWorkload struct {
	terms, values int
	events        []match.Event
	raw           [][]byte // events' encodings
	values2       [][]int  // values2[e][i]: event e's value of attribute i
	filters       []match.Filter
}

// attrName is attribute i's name.
func attrName(i int) string { return fmt.Sprintf("a%d", i) }

// valuesFor is V such that `filters` random three-equality filters over
// values in [0, V) leave about a share hit of events matched by one:
// 1 - exp(-filters / V^3) = hit.
func valuesFor(filters int, hit float64) int {
	v := math.Cbrt(float64(filters) / -math.Log1p(-hit))
	return max(2, int(math.Round(v)))
}

// newWorkload draws a point's events and distinct filters.
func newWorkload(r *rand.Rand, terms, filters, events int, hit float64) pointWorkload {
	w := pointWorkload{terms: terms, values: valuesFor(filters, hit)}
	attrs := make([]match.Attr, terms)
	for range events {
		vals := make([]int, terms)
		for i := range attrs {
			vals[i] = r.IntN(w.values)
			attrs[i] = match.Attr{Name: attrName(i), Value: match.Int(int64(vals[i]))}
		}
		e := match.MustEvent(attrs...)
		w.events = append(w.events, e)
		w.raw = append(w.raw, wire.AppendEvent(nil, e))
		w.values2 = append(w.values2, vals)
	}
	seen := make(map[string]bool, filters)
	for len(w.filters) < filters {
		f := w.randomFilter(r)
		if text := f.String(); !seen[text] {
			seen[text] = true
			w.filters = append(w.filters, f)
		}
	}
	return w
}

// randomFilter is three equalities on distinct attributes, random values.
func (w *pointWorkload) randomFilter(r *rand.Rand) match.Filter {
	var cs []match.Constraint
	for _, i := range distinct(r, w.terms, constraintsPerFilter) {
		cs = append(cs, eq(i, r.IntN(w.values)))
	}
	return match.MustFilter(cs...)
}

// probe is a filter event e satisfies but for one constraint: two
// equalities on e's values and one on another value of a third attribute.
func (w *pointWorkload) probe(r *rand.Rand, e int) match.Filter {
	at := distinct(r, w.terms, constraintsPerFilter)
	vals := w.values2[e]
	other := (vals[at[2]] + 1 + r.IntN(w.values-1)) % w.values
	return match.MustFilter(eq(at[0], vals[at[0]]), eq(at[1], vals[at[1]]), eq(at[2], other))
}

func eq(attr, v int) match.Constraint {
	c, err := match.NewConstraint(attrName(attr), match.OpEq, match.Int(int64(v)))
	if err != nil {
		panic(err) // a valid name and value
	}
	return c
}

// distinct draws k distinct integers in [0, n), n >= k.
func distinct(r *rand.Rand, n, k int) []int {
	out := make([]int, 0, k)
	for len(out) < k {
		x := r.IntN(n)
		dup := false
		for _, y := range out {
			dup = dup || x == y
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out
}
