package match

import (
	"strings"
	"testing"
)

// TestEventJSONStrict: invalid UTF-8 in a string and a number that
// underflows to zero are errors naming the attribute, not silent
// replacements; valid neighbours still parse.
func TestEventJSONStrict(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\"name\":\"ok\",\"s\":\"a\xffb\"}", "attribute s: string is not valid UTF-8"},
		{"{\"n\\u00e9\xff\":1}", "not valid UTF-8"},
		{`{"x":1e-400}`, "attribute x: number 1e-400 underflows float64"},
		{`{"x":-0.000e-999}`, ""},
		{`{"x":0.0}`, ""},
		{`{"x":5e-324,"s":"héllo"}`, ""},
		{`{"x":1e400}`, "attribute x: number 1e400 is not a finite float64"},
	} {
		_, err := ParseEventJSON([]byte(c.in))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}
