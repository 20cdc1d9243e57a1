package match

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a Value.
type Kind uint8

// The kinds of values. The zero Kind marks an invalid (zero) Value.
const (
	KindInvalid Kind = iota
	KindString
	KindInt
	KindFloat
	KindBool
)

// String returns the kind's name as used in error messages.
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindBool:
		return "bool"
	}
	return "invalid"
}

// class groups kinds that compare with each other: int and float form one
// numeric class.
type class uint8

const (
	classNone class = iota
	classString
	classNumber
	classBool
)

func (k Kind) class() class {
	switch k {
	case KindString:
		return classString
	case KindInt, KindFloat:
		return classNumber
	case KindBool:
		return classBool
	}
	return classNone
}

// Value is an attribute or constraint value: a string, an int64, a float64 or
// a bool. The zero Value is invalid. Values are small and passed by value.
type Value struct {
	kind Kind
	bits uint64 // int64, float64 bits, or 0/1 for bool
	str  string
}

// Str returns a string Value.
func Str(s string) Value { return Value{kind: KindString, str: s} }

// Int returns an int64 Value.
func Int(i int64) Value { return Value{kind: KindInt, bits: uint64(i)} }

// Float returns a float64 Value. NaN and infinities are rejected with an
// error, since no event or filter may carry them.
func Float(f float64) (Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, fmt.Errorf("%v is not a finite number", f)
	}
	return Value{kind: KindFloat, bits: math.Float64bits(f)}, nil
}

// MustFloat is Float for values known to be finite; it panics otherwise.
func MustFloat(f float64) Value {
	v, err := Float(f)
	if err != nil {
		panic(err)
	}
	return v
}

// Bool returns a bool Value.
func Bool(b bool) Value {
	if b {
		return Value{kind: KindBool, bits: 1}
	}
	return Value{kind: KindBool}
}

// Kind returns the value's kind.
func (v Value) Kind() Kind { return v.kind }

// IsValid reports whether v is a non-zero Value.
func (v Value) IsValid() bool { return v.kind != KindInvalid }

// AsString returns the string of a string Value ("" otherwise).
func (v Value) AsString() string { return v.str }

// AsInt returns the int64 of an int Value (0 otherwise).
func (v Value) AsInt() int64 {
	if v.kind != KindInt {
		return 0
	}
	return int64(v.bits)
}

// AsFloat returns the float64 of a float Value, or the nearest float64 of an
// int Value (0 otherwise). It is an approximation for ints above 2^53; use
// Compare for exact ordering.
func (v Value) AsFloat() float64 {
	switch v.kind {
	case KindFloat:
		return math.Float64frombits(v.bits)
	case KindInt:
		return float64(int64(v.bits))
	}
	return 0
}

// AsBool returns the bool of a bool Value (false otherwise).
func (v Value) AsBool() bool { return v.kind == KindBool && v.bits == 1 }

// Comparable reports whether a and b can be ordered: both strings, both
// numbers (int or float, in any mix) or both bools.
func Comparable(a, b Value) bool {
	return a.kind.class() == b.kind.class() && a.kind != KindInvalid
}

// Compare orders a and b: -1 if a < b, 0 if equal, +1 if a > b. ok is false
// when the values are not comparable. Numbers compare by exact mathematical
// value, even an int64 above 2^53 against a float64; strings compare
// bytewise; false < true.
func Compare(a, b Value) (c int, ok bool) {
	if !Comparable(a, b) {
		return 0, false
	}
	switch a.kind.class() {
	case classString:
		return strings.Compare(a.str, b.str), true
	case classBool:
		return cmp.Compare(a.bits, b.bits), true
	}
	return compareNumbers(a, b), true
}

// Equal reports whether a and b are the same value of the same kind. Int 5
// and float 5.0 are not Equal, though Compare finds them equal.
func (v Value) Equal(w Value) bool { return v == w }

// String renders v in the filter language: strings quoted with Go escapes,
// floats always with a fraction or exponent so they read back as floats.
func (v Value) String() string {
	switch v.kind {
	case KindString:
		return strconv.Quote(v.str)
	case KindInt:
		return strconv.FormatInt(int64(v.bits), 10)
	case KindFloat:
		return formatFloat(math.Float64frombits(v.bits))
	case KindBool:
		return strconv.FormatBool(v.bits == 1)
	}
	return "<invalid>"
}

func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
