package match

import (
	"testing"
	"unsafe"
)

// within reports whether s's bytes lie inside text's.
func within(s, text string) bool {
	if len(s) == 0 || len(text) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(text)))
	return p >= lo && p < lo+uintptr(len(text))
}

// TestParseCompact: the compacted filter is the parsed one (same
// constraints, text, covering and matching), none of its strings points
// into the text it was parsed from, its slice has no spare capacity, and
// an attribute name is one copy across filters.
func TestParseCompact(t *testing.T) {
	g := newGen(19)
	names := map[string]*byte{}
	for range 3000 {
		text := g.filter().String()
		text = string([]byte(text)) // a private copy, as a wire decoder makes
		want, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseCompact(text)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) || got.String() != want.String() || !Covers(got, want) || !Covers(want, got) {
			t.Fatalf("%q: compact %s, parsed %s", text, got, want)
		}
		if cap(got.cs) != len(got.cs) {
			t.Fatalf("%q: %d constraints in a slice of capacity %d", text, len(got.cs), cap(got.cs))
		}
		for _, c := range got.cs {
			if within(c.Attr, text) || within(c.Val.str, text) {
				t.Fatalf("%q: constraint %s still points into the text", text, c)
			}
			if p, ok := names[c.Attr]; ok && p != unsafe.StringData(c.Attr) {
				t.Fatalf("attribute %q has two copies", c.Attr)
			}
			names[c.Attr] = unsafe.StringData(c.Attr)
		}
		ev := g.event()
		if got.Matches(ev) != want.Matches(ev) {
			t.Fatalf("%q: compact and parsed disagree on %v", text, ev)
		}
	}
	if _, err := ParseCompact("price >"); err == nil {
		t.Fatal("a malformed filter parsed")
	}
	if f, err := ParseCompact(MatchAllText); err != nil || f.Len() != 0 {
		t.Fatalf("match-all: %v, %v", f, err)
	}
}
