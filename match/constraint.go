package match

import (
	"cmp"
	"fmt"
	"strings"
)

// Constraint is one predicate `Attr Op Val` of a filter. Val is unused (the
// zero Value) for OpExists.
type Constraint struct {
	Attr string
	Op   Op
	Val  Value
}

// NewConstraint returns a validated constraint: the name must be an
// attribute name, the operator known, the value present (absent for exists)
// and a string for prefix, suffix and contains.
func NewConstraint(attr string, op Op, val Value) (Constraint, error) {
	c := Constraint{Attr: attr, Op: op, Val: val}
	return c, c.Validate()
}

// Validate reports why c is not a well-formed constraint, or nil.
func (c Constraint) Validate() error {
	if err := checkAttrName(c.Attr); err != nil {
		return err
	}
	switch {
	case c.Op == OpInvalid || c.Op > OpExists:
		return fmt.Errorf("attribute %s: invalid operator %d", c.Attr, c.Op)
	case c.Op == OpExists:
		if c.Val.IsValid() {
			return fmt.Errorf("attribute %s: exists takes no value", c.Attr)
		}
	case !c.Val.IsValid():
		return fmt.Errorf("attribute %s: operator %s needs a value", c.Attr, c.Op)
	case c.Op.IsStringOp() && c.Val.Kind() != KindString:
		return fmt.Errorf("attribute %s: operator %s needs a string, got %s", c.Attr, c.Op, c.Val.Kind())
	}
	return nil
}

// Holds reports whether the constraint holds for an event value v; present
// is false when the event lacks the attribute (then nothing holds).
func (c Constraint) Holds(v Value, present bool) bool {
	if !present {
		return false
	}
	switch c.Op {
	case OpExists:
		return true
	case OpPrefix:
		return v.kind == KindString && strings.HasPrefix(v.str, c.Val.str)
	case OpSuffix:
		return v.kind == KindString && strings.HasSuffix(v.str, c.Val.str)
	case OpContains:
		return v.kind == KindString && strings.Contains(v.str, c.Val.str)
	}
	cmp, ok := Compare(v, c.Val)
	if !ok {
		return false
	}
	return cmpSatisfies(c.Op, cmp)
}

// cmpSatisfies reports whether an ordering result cmp (event value against
// constraint value) satisfies a comparison operator.
func cmpSatisfies(op Op, cmp int) bool {
	switch op {
	case OpEq:
		return cmp == 0
	case OpNe:
		return cmp != 0
	case OpLt:
		return cmp < 0
	case OpLe:
		return cmp <= 0
	case OpGt:
		return cmp > 0
	case OpGe:
		return cmp >= 0
	}
	return false
}

// String renders the constraint in the filter language.
func (c Constraint) String() string {
	if c.Op == OpExists {
		return c.Attr + " exists"
	}
	return c.Attr + " " + c.Op.String() + " " + c.Val.String()
}

// compareConstraints is the canonical order: by attribute, operator, then
// value kind and value.
func compareConstraints(a, b Constraint) int {
	if c := strings.Compare(a.Attr, b.Attr); c != 0 {
		return c
	}
	if a.Op != b.Op {
		return cmp.Compare(uint64(a.Op), uint64(b.Op))
	}
	if a.Val.kind != b.Val.kind {
		return cmp.Compare(uint64(a.Val.kind), uint64(b.Val.kind))
	}
	if a.Val.kind == KindString {
		return strings.Compare(a.Val.str, b.Val.str)
	}
	c, _ := Compare(a.Val, b.Val)
	return c
}
