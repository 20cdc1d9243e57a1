package match

import (
	"math"
	"strings"
	"testing"
)

func ev(t *testing.T, js string) Event {
	t.Helper()
	e, err := ParseEventJSON([]byte(js))
	if err != nil {
		t.Fatalf("ParseEventJSON(%s): %v", js, err)
	}
	return e
}

func TestMatchSemantics(t *testing.T) {
	for _, tc := range []struct {
		filter, event string
		want          bool
	}{
		{`price < 10`, `{"price":9.5}`, true},
		{`price < 10`, `{"price":10}`, false},
		{`price < 10.5`, `{"price":10}`, true},
		{`price == 10`, `{"price":10.0}`, true},
		{`price != 10`, `{"price":"10"}`, false}, // incomparable: false even for !=
		{`price != 10`, `{}`, false},
		{`price exists`, `{"price":"x"}`, true},
		{`price > 5 && price <= 10`, `{"price":10}`, true},
		{`price > 5 && price <= 10`, `{"price":5}`, false},
		// Exact comparison above 2^53: 2^53+1 is not representable as a float64.
		{`n > 9007199254740992.0`, `{"n":9007199254740993}`, true},
		{`n == 9007199254740992.0`, `{"n":9007199254740993}`, false},
		{`n < 9007199254740993`, `{"n":9007199254740992.0}`, true},
		{`n >= 9223372036854775807`, `{"n":9.3e18}`, true},
		{`n < -9223372036854775808`, `{"n":-9.3e18}`, true},
		{`sym prefix "IB"`, `{"sym":"IBM"}`, true},
		{`sym suffix "BM"`, `{"sym":"IBM"}`, true},
		{`sym contains "B"`, `{"sym":"IBM"}`, true},
		{`sym prefix "IB"`, `{"sym":5}`, false},
		{`sym < "b"`, `{"sym":"abc"}`, true},
		{`flag > false`, `{"flag":true}`, true},
		{`flag == true`, `{"flag":1}`, false},
		{`*`, `{}`, true},
	} {
		f, err := Parse(tc.filter)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.filter, err)
		}
		if got := f.Matches(ev(t, tc.event)); got != tc.want {
			t.Errorf("%s on %s = %v, want %v", tc.filter, tc.event, got, tc.want)
		}
	}
}

func TestCompareExact(t *testing.T) {
	big := int64(1)<<53 + 1
	if c, _ := Compare(Int(big), MustFloat(float64(1<<53))); c != 1 {
		t.Errorf("2^53+1 vs 2^53.0 = %d, want 1", c)
	}
	if c, _ := Compare(Int(math.MaxInt64), MustFloat(9223372036854775807)); c != -1 {
		t.Errorf("MaxInt64 vs 2^63.0 = %d, want -1", c)
	}
	if c, _ := Compare(Int(math.MinInt64), MustFloat(-9223372036854775808)); c != 0 {
		t.Errorf("MinInt64 vs -2^63.0 = %d, want 0", c)
	}
	if _, ok := Compare(Str("1"), Int(1)); ok {
		t.Error("string and int compared")
	}
	if _, err := Float(math.NaN()); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := Float(math.Inf(1)); err == nil {
		t.Error("Inf accepted")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		col  int
		msg  string
	}{
		{``, 1, "expected an attribute name"},
		{`a`, 2, "expected an operator"},
		{`a = 5`, 3, "expected an operator"},
		{`a ==`, 5, "expected a value"},
		{`a == 5 &&`, 10, "expected an attribute name"},
		{`a == 5 || b == 1`, 8, "expected && or the end"},
		{`a prefix 5`, 10, "needs a string"},
		{`a == NaN`, 6, "NaN"},
		{`a == 1e999`, 6, "not a finite"},
		{`a == 99999999999999999999`, 6, "out of the int64 range"},
		{`a == "x`, 6, "unterminated"},
		{`é == 1`, 1, "expected an attribute name"},
		{`aé == 1`, 2, "expected an operator"},
		{`* && a == 1`, 3, "expected the end"},
	} {
		_, err := Parse(tc.text)
		pe, ok := err.(*ParseError)
		if !ok {
			t.Errorf("Parse(%q) = %v, want a *ParseError", tc.text, err)
			continue
		}
		if pe.Col != tc.col || !strings.Contains(pe.Msg, tc.msg) {
			t.Errorf("Parse(%q) = col %d %q, want col %d containing %q", tc.text, pe.Col, pe.Msg, tc.col, tc.msg)
		}
	}
}

func TestCanonicalRoundTrip(t *testing.T) {
	g := newGen(3)
	for range 2000 {
		f := g.filter()
		back, err := Parse(f.String())
		if err != nil {
			t.Fatalf("Parse(%q): %v", f, err)
		}
		if !back.Equal(f) {
			t.Fatalf("Parse(%q) = %q, not equal", f, back)
		}
	}
	a := MustParse(`b == 1 && a < 2.0 && b == 1`)
	if got := a.String(); got != `a < 2.0 && b == 1` {
		t.Errorf("canonical form %q", got)
	}
}

func TestEventJSONErrors(t *testing.T) {
	for _, tc := range []struct{ js, msg string }{
		{`{"a":{"b":1}}`, "attribute a: nested objects"},
		{`{"a":[1]}`, "attribute a: arrays"},
		{`{"a":null}`, "attribute a: null"},
		{`{"a":1,"a":2}`, "attribute a: given twice"},
		{`{"1a":1}`, `invalid attribute name "1a"`},
		{`{"a":1e999}`, "attribute a: number 1e999"},
		{`{"a":123456789012345678901}`, "attribute a: integer"},
		{`[1]`, "must be a JSON object"},
		{`{"a":1} {}`, "after the event"},
		{`{"a":`, "invalid JSON"},
	} {
		_, err := ParseEventJSON([]byte(tc.js))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseEventJSON(%s) = %v, want an error containing %q", tc.js, err, tc.msg)
		}
	}
	e := ev(t, `{"i":3,"f":3.0,"s":"x","b":true}`)
	if v, _ := e.Get("i"); v.Kind() != KindInt {
		t.Errorf("3 decoded as %v", v.Kind())
	}
	if v, _ := e.Get("f"); v.Kind() != KindFloat {
		t.Errorf("3.0 decoded as %v", v.Kind())
	}
	if back := ev(t, e.String()); !back.Equal(e) {
		t.Errorf("JSON round trip %v -> %v", e, back)
	}
}

func TestCoversExamples(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`price < 10`, `price < 5 && symbol == "X"`, true},
		{`price < 5`, `price < 10`, false},
		{`price exists`, `price == "x"`, true},
		{`price != 3`, `price > 5`, true},
		{`price != 3`, `price exists`, false},
		{`sym prefix "so"`, `sym prefix "soft"`, true},
		{`sym contains "of"`, `sym prefix "soft"`, true},
		{`sym >= "so"`, `sym prefix "soft"`, true},
		{`sym suffix "ft"`, `sym suffix "soft"`, true},
		{`price <= 10`, `price < 10`, true},
		{`price < 10`, `price <= 10 && price != 10`, true},
		{`price > 1`, `price > 2 && price < 1`, true}, // unsatisfiable b
		{`a == 1`, `*`, false},
		{`*`, `a == 1`, true},
		{`price < 10`, `price < 10.0`, true},
		{`price < 10.0`, `price < 10`, true},
	} {
		if got := Covers(MustParse(tc.a), MustParse(tc.b)); got != tc.want {
			t.Errorf("Covers(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestMergeExamples(t *testing.T) {
	for _, tc := range []struct {
		a, b, want string
		perfect    bool
	}{
		{`p >= 1 && p <= 5 && s == "X"`, `p >= 5 && p < 9 && s == "X"`, `p < 9 && p >= 1 && s == "X"`, true},
		{`s prefix "ab"`, `s prefix "ac"`, `s < "ad" && s >= "ab" && s prefix "a"`, true},
		{`f == true`, `f == false`, `f <= true && f >= false`, true},
		{`p < 1 && s == "X"`, `p > 5 && s == "X"`, `p exists && s == "X"`, false},
		{`p < 1`, `q > 5`, `*`, false},
		{`p < 5`, `p < 3`, `p < 5`, true},
	} {
		m, perfect := Merge(MustParse(tc.a), MustParse(tc.b))
		if m.String() != MustParse(tc.want).String() || perfect != tc.perfect {
			t.Errorf("Merge(%s, %s) = %s, %v; want %s, %v", tc.a, tc.b, m, perfect, tc.want, tc.perfect)
		}
	}
}
