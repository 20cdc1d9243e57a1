package match

import (
	"fmt"
	"slices"
	"strings"
)

// MatchAllText is the canonical text of the filter with no constraints,
// which matches every event.
const MatchAllText = "*"

// Filter is a conjunction of constraints, kept in canonical order (sorted by
// attribute, operator and value, without duplicates), so that two filters
// with the same constraints are Equal whatever order they were written in.
// The zero Filter has no constraints and matches every event. Filters are
// immutable: methods never modify the constraint slice.
type Filter struct {
	cs []Constraint
}

// NewFilter validates the constraints and returns them as a canonical
// filter.
func NewFilter(cs ...Constraint) (Filter, error) {
	for i, c := range cs {
		if err := c.Validate(); err != nil {
			return Filter{}, fmt.Errorf("constraint %d: %w", i+1, err)
		}
	}
	return canonicalFilter(slices.Clone(cs)), nil
}

// MustFilter is NewFilter for constraints known to be valid; it panics
// otherwise.
func MustFilter(cs ...Constraint) Filter {
	f, err := NewFilter(cs...)
	if err != nil {
		panic(err)
	}
	return f
}

// canonicalFilter sorts and deduplicates cs in place and wraps it.
func canonicalFilter(cs []Constraint) Filter {
	slices.SortFunc(cs, compareConstraints)
	cs = slices.CompactFunc(cs, func(a, b Constraint) bool { return a == b })
	if len(cs) == 0 {
		return Filter{}
	}
	return Filter{cs: cs}
}

// Len returns the number of constraints.
func (f Filter) Len() int { return len(f.cs) }

// At returns the i-th constraint in canonical order.
func (f Filter) At(i int) Constraint { return f.cs[i] }

// Constraints returns a copy of the constraints in canonical order.
func (f Filter) Constraints() []Constraint { return slices.Clone(f.cs) }

// Equal reports whether f and g have the same constraints.
func (f Filter) Equal(g Filter) bool { return slices.Equal(f.cs, g.cs) }

// Compare orders filters canonically (constraint by constraint, shorter
// first on a common prefix); 0 means Equal.
func (f Filter) Compare(g Filter) int {
	return slices.CompareFunc(f.cs, g.cs, compareConstraints)
}

// Attrs returns the distinct attribute names the filter constrains, sorted.
func (f Filter) Attrs() []string {
	var names []string
	for _, c := range f.cs {
		if len(names) == 0 || names[len(names)-1] != c.Attr {
			names = append(names, c.Attr)
		}
	}
	return names
}

// Matches reports whether every constraint holds for the event. Both sides
// are sorted by attribute name, so one merge walk finds every value.
func (f Filter) Matches(e Event) bool {
	ea := e.attrs
	for i := range f.cs {
		c := &f.cs[i]
		for len(ea) > 0 && ea[0].Name < c.Attr {
			ea = ea[1:]
		}
		if len(ea) == 0 || ea[0].Name != c.Attr || !c.Holds(ea[0].Value, true) {
			return false
		}
	}
	return true
}

// String renders the filter in canonical form: constraints joined by " && ",
// or MatchAllText for the empty filter. Parse(f.String()) is Equal to f.
func (f Filter) String() string {
	if len(f.cs) == 0 {
		return MatchAllText
	}
	var b strings.Builder
	for i, c := range f.cs {
		if i > 0 {
			b.WriteString(" && ")
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// And returns the conjunction of f and g.
func (f Filter) And(g Filter) Filter {
	return canonicalFilter(slices.Concat(f.cs, g.cs))
}

// onAttr returns the constraints of f on one attribute (a subslice; do not
// modify it).
func (f Filter) onAttr(attr string) []Constraint {
	i, _ := slices.BinarySearchFunc(f.cs, attr, func(c Constraint, a string) int {
		return strings.Compare(c.Attr, a)
	})
	j := i
	for j < len(f.cs) && f.cs[j].Attr == attr {
		j++
	}
	return f.cs[i:j]
}
