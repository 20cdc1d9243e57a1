package sublog

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

func ev(attrs ...match.Attr) match.Event { return match.MustEvent(attrs...) }

func TestLineRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		e    Entry
		line string
	}{
		{Entry{Kind: KindEvent, Pubend: "r1", Tick: 17, Event: ev(match.Attr{Name: "seq", Value: match.Int(3)}, match.Attr{Name: "sym", Value: match.Str(`a"b`)})},
			`{"pubend":"r1","tick":17,"event":{"seq":3,"sym":"a\"b"}}`},
		{Entry{Kind: KindGap, Pubend: "p", Gap: durable.Range{From: 5, To: 9}}, `{"pubend":"p","gap":[5,9]}`},
		{Entry{Kind: KindCT, CT: durable.CT{"b": 4, "a": 0}}, `{"ct":{"a":0,"b":4}}`},
		{Entry{Kind: KindCT, CT: durable.CT{}}, `{"ct":{}}`},
	} {
		if got := tc.e.String(); got != tc.line {
			t.Errorf("AppendLine(%+v) = %s, want %s", tc.e, got, tc.line)
		}
		back, err := ParseLine([]byte(tc.line))
		if err != nil {
			t.Fatalf("ParseLine(%s): %v", tc.line, err)
		}
		if !back.Equal(tc.e) {
			t.Errorf("ParseLine(%s) = %+v, want %+v", tc.line, back, tc.e)
		}
	}
}

func TestParseLineRejects(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{``, "invalid JSON"},
		{`{"pubend":"p","tick":1,"event":{"a":1}`, "invalid JSON"},
		{`[1]`, "invalid JSON"},
		{`{}`, `needs "event", "gap" or "ct"`},
		{`{"pubend":"p","tick":1,"event":{"a":1}} {}`, "data after"},
		{`{"pubend":"p","tick":1,"event":{"a":1},"x":1}`, "unknown field"},
		{`{"pubend":"p","event":{"a":1}}`, `needs "pubend" and "tick"`},
		{`{"pubend":"p","tick":0,"event":{"a":1}}`, "tick >= 1"},
		{`{"pubend":"","tick":3,"event":{"a":1}}`, "want a name"},
		{`{"pubend":"p","tick":3,"event":{"a":{"b":1}}}`, "event line: "},
		{`{"pubend":"p","tick":3,"event":[1]}`, "event line: "},
		{`{"pubend":"p","tick":1.5,"event":{"a":1}}`, "invalid JSON"},
		{`{"pubend":"p","gap":[3]}`, "[FROM,TO]"},
		{`{"pubend":"p","gap":[4,3]}`, "[FROM,TO]"},
		{`{"pubend":"p","gap":[0,3]}`, "[FROM,TO]"},
		{`{"pubend":"p","tick":2,"gap":[1,3]}`, `exactly "pubend" and "gap"`},
		{`{"gap":[1,3]}`, `exactly "pubend" and "gap"`},
		{`{"ct":{"p":-1}}`, "tick >= 0"},
		{`{"ct":{"":1}}`, "want a name"},
		{`{"ct":{"p":1},"pubend":"p"}`, `only "ct"`},
	} {
		_, err := ParseLine([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseLine(%s) = %v, want an error containing %q", tc.line, err, tc.want)
		}
	}
}
