package match

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestNewTrustedEventAgreesWithNewEvent draws attribute lists, sorts and
// dedups their names as the contract requires, and checks that the trusted
// constructor builds the event NewEvent builds, attribute for attribute,
// and that every name is found by Get.
func TestNewTrustedEventAgreesWithNewEvent(t *testing.T) {
	names := []string{"a", "a.b", "a_b", "b", "price", "symbol", "x-1", "Z", "_"}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, len(names)).Draw(t, "n")
		var attrs []Attr
		for i := range n {
			name := rapid.SampledFrom(names).Draw(t, "name")
			attrs = append(attrs, Attr{Name: name, Value: genValue(t, string(rune('a'+i)))})
		}
		slices.SortStableFunc(attrs, func(a, b Attr) int { return strings.Compare(a.Name, b.Name) })
		attrs = slices.CompactFunc(attrs, func(a, b Attr) bool { return a.Name == b.Name })

		want, err := NewEvent(attrs...)
		if err != nil {
			t.Fatalf("NewEvent refused attributes that meet the contract: %v", err)
		}
		got := NewTrustedEvent(slices.Clone(attrs))
		if !got.Equal(want) || !want.Equal(got) {
			t.Fatalf("NewTrustedEvent = %v, NewEvent = %v", got, want)
		}
		if got.Len() != want.Len() {
			t.Fatalf("Len: trusted %d, NewEvent %d", got.Len(), want.Len())
		}
		for i := range got.Len() {
			if got.At(i) != want.At(i) {
				t.Fatalf("At(%d): trusted %v, NewEvent %v", i, got.At(i), want.At(i))
			}
			v, ok := got.Get(want.At(i).Name)
			if !ok || v != want.At(i).Value {
				t.Fatalf("Get(%q) = %v, %v; want %v", want.At(i).Name, v, ok, want.At(i).Value)
			}
		}
		if got.String() != want.String() {
			t.Fatalf("String: trusted %s, NewEvent %s", got, want)
		}
	})
}

// TestNewTrustedEventKeepsTheSlice checks the documented ownership: the
// event holds the caller's slice (no copy), which is why the caller must
// not modify it.
func TestNewTrustedEventKeepsTheSlice(t *testing.T) {
	attrs := []Attr{{Name: "a", Value: Int(1)}, {Name: "b", Value: Str("x")}}
	e := NewTrustedEvent(attrs)
	attrs[0].Value = Int(2)
	if v, _ := e.Get("a"); v != Int(2) {
		t.Fatalf("the event copied its attributes: Get(a) = %v", v)
	}
}
