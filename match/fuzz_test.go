package match

import "testing"

// FuzzParse checks that the parser never panics, and that whatever it
// accepts prints canonically and parses back to an equal filter.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`symbol == "IBM" && price < 10 && exchange prefix "NY"`, `*`, `a exists`,
		`p > -1.5e3 && p <= 9007199254740993`, "s == `raw` && t != \"\\xff\"", `f == true`, `a == NaN`, `&&`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		flt, err := Parse(text)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse(%q) returned %T, want *ParseError", text, err)
			}
			return
		}
		back, err := Parse(flt.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its canonical form %q fails: %v", text, flt, err)
		}
		if !back.Equal(flt) {
			t.Fatalf("round trip of %q: %q != %q", text, back, flt)
		}
	})
}

// FuzzParseEventJSON checks that the event decoder never panics and that
// what it accepts encodes and decodes to an equal event.
func FuzzParseEventJSON(f *testing.F) {
	for _, s := range []string{`{"symbol":"IBM","price":9.5,"volume":100,"urgent":true}`, `{}`, `{"a":{"b":1}}`,
		`{"a":9007199254740993}`, `{"a":1e400}`, `{"a":"\u00e9\ud800"}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseEventJSON(data)
		if err != nil {
			return
		}
		back, err := ParseEventJSON(e.AppendJSON(nil))
		if err != nil {
			t.Fatalf("%s decoded, but its encoding %s fails: %v", data, e, err)
		}
		if !back.Equal(e) {
			t.Fatalf("round trip of %s: %v != %v", data, back, e)
		}
	})
}
