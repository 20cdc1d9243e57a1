package bench

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/vm"

	"github.com/sift-pubsub/sift/match"
)

// ExprName is the structure name of the expr-lang baseline.
const ExprName = "expr"

// Expr is the baseline a Go developer would write today without Sift: every
// subscription compiled once with github.com/expr-lang/expr and evaluated
// against each event in turn, the event handed over as a map. It
// implements match.Index (subscription ids in insertion order of the
// surviving subscriptions).
//
// The translation keeps Sift's semantics: a constraint on a missing
// attribute or a value of another type is false (a runtime error of the
// expression counts as no match, and `!=` is guarded by the value's type),
// bool orderings are rewritten as equalities, prefix, suffix and contains
// become startsWith, endsWith and contains. One deviation remains: expr
// compares an int with a float as two float64s, so an int beyond ±2^53
// compared with a float may round; Exact reports the events for which the
// results are guaranteed equal to Scan's.
type Expr struct {
	ids      []match.ID
	progs    []*vm.Program
	pos      map[match.ID]int
	bigConst int // subscriptions with an int constant beyond ±2^53
	big      []bool
	machine  vm.VM
	env      map[string]any
}

// NewExpr returns an empty expr baseline.
func NewExpr() *Expr {
	return &Expr{pos: make(map[match.ID]int), env: make(map[string]any)}
}

// Insert compiles the filter; it fails, changing nothing, when the id is
// present or the filter cannot be compiled.
func (x *Expr) Insert(id match.ID, f match.Filter) error {
	if _, dup := x.pos[id]; dup {
		return fmt.Errorf("expr: subscription %d already present", id)
	}
	src := ExprSource(f)
	prog, err := expr.Compile(src, expr.AllowUndefinedVariables(), expr.AsBool())
	if err != nil {
		return fmt.Errorf("expr: compile subscription %d %q: %w", id, src, err)
	}
	big := hasBigInt(f)
	if big {
		x.bigConst++
	}
	x.pos[id] = len(x.ids)
	x.ids = append(x.ids, id)
	x.progs = append(x.progs, prog)
	x.big = append(x.big, big)
	return nil
}

// Delete removes a subscription, moving the last one into its place.
func (x *Expr) Delete(id match.ID) error {
	i, ok := x.pos[id]
	if !ok {
		return fmt.Errorf("expr: subscription %d not present", id)
	}
	if x.big[i] {
		x.bigConst--
	}
	last := len(x.ids) - 1
	x.ids[i], x.progs[i], x.big[i] = x.ids[last], x.progs[last], x.big[last]
	x.pos[x.ids[i]] = i
	x.ids, x.progs, x.big = x.ids[:last], x.progs[:last], x.big[:last]
	delete(x.pos, id)
	return nil
}

// Match evaluates every program against the event; a program that fails
// at run time (a missing attribute or mismatched types) does not match.
func (x *Expr) Match(e match.Event, dst []match.ID) []match.ID {
	clear(x.env)
	for i := range e.Len() {
		a := e.At(i)
		x.env[a.Name] = goValue(a.Value)
	}
	for i, p := range x.progs {
		out, err := x.machine.Run(p, x.env)
		if err == nil && out == true {
			dst = append(dst, x.ids[i])
		}
	}
	return dst
}

// Len returns the number of subscriptions.
func (x *Expr) Len() int { return len(x.ids) }

// Exact reports whether Match gives exactly Scan's result for e: false
// only when e carries an int beyond ±2^53, or a subscription holds such an
// int constant, since expr compares ints with floats as float64.
func (x *Expr) Exact(e match.Event) bool {
	if x.bigConst > 0 {
		return false
	}
	for i := range e.Len() {
		if isBigInt(e.At(i).Value) {
			return false
		}
	}
	return true
}

func goValue(v match.Value) any {
	switch v.Kind() {
	case match.KindString:
		return v.AsString()
	case match.KindInt:
		return v.AsInt()
	case match.KindFloat:
		return v.AsFloat()
	case match.KindBool:
		return v.AsBool()
	}
	return nil
}

const maxExactInt = 1 << 53

func isBigInt(v match.Value) bool {
	return v.Kind() == match.KindInt && (v.AsInt() > maxExactInt || v.AsInt() < -maxExactInt)
}

func hasBigInt(f match.Filter) bool {
	for i := range f.Len() {
		if isBigInt(f.At(i).Val) {
			return true
		}
	}
	return false
}

// ExprSource returns the expr-lang expression equivalent to f, as a
// developer would write it: `price < 10 && symbol == "IBM"`.
func ExprSource(f match.Filter) string {
	if f.Len() == 0 {
		return "true"
	}
	parts := make([]string, f.Len())
	for i := range f.Len() {
		parts[i] = exprConstraint(f.At(i))
	}
	return strings.Join(parts, " && ")
}

func exprConstraint(c match.Constraint) string {
	name := exprName(c.Attr)
	switch c.Op {
	case match.OpExists:
		return name + " != nil"
	case match.OpPrefix:
		return name + " startsWith " + exprLiteral(c.Val)
	case match.OpSuffix:
		return name + " endsWith " + exprLiteral(c.Val)
	case match.OpContains:
		return name + " contains " + exprLiteral(c.Val)
	}
	if c.Val.Kind() == match.KindBool {
		return exprBool(name, c)
	}
	if c.Op == match.OpNe {
		return "(" + exprTypeGuard(name, c.Val.Kind()) + " && " + name + " != " + exprLiteral(c.Val) + ")"
	}
	return name + " " + c.Op.String() + " " + exprLiteral(c.Val)
}

// exprBool rewrites a bool comparison (expr cannot order bools) as the
// equality or type test that holds for the same values.
func exprBool(name string, c match.Constraint) string {
	var holds []bool
	for _, b := range []bool{false, true} {
		if c.Holds(match.Bool(b), true) {
			holds = append(holds, b)
		}
	}
	switch len(holds) {
	case 0:
		return "false"
	case 1:
		return name + " == " + strconv.FormatBool(holds[0])
	}
	return exprTypeGuard(name, match.KindBool)
}

func exprTypeGuard(name string, k match.Kind) string {
	switch k {
	case match.KindString:
		return "type(" + name + ") == \"string\""
	case match.KindBool:
		return "type(" + name + ") == \"bool\""
	}
	return "(type(" + name + ") == \"int\" || type(" + name + ") == \"float\")"
}

func exprLiteral(v match.Value) string {
	switch v.Kind() {
	case match.KindString:
		return strconv.Quote(v.AsString())
	}
	// Ints print as ints, floats always with a fraction or exponent,
	// bools as true or false: all valid expr literals.
	return v.String()
}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// exprKeywords are words the expr language reserves besides its builtins.
var exprKeywords = map[string]bool{
	"true": true, "false": true, "nil": true, "not": true, "and": true, "or": true,
	"in": true, "matches": true, "contains": true, "startsWith": true, "endsWith": true,
	"let": true, "if": true, "else": true, "has": true,
}

// exprName returns how the expression refers to an attribute: its name
// when that is a plain identifier, otherwise $env["name"].
func exprName(attr string) string {
	if plainIdent.MatchString(attr) && !exprKeywords[attr] {
		if _, isBuiltin := builtin.Index[attr]; !isBuiltin {
			return attr
		}
	}
	return "$env[" + strconv.Quote(attr) + "]"
}
