package durable

import (
	"bytes"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

func genEvent(t *rapid.T) match.Event {
	n := rapid.IntRange(0, 5).Draw(t, "n")
	seen := map[string]bool{}
	var attrs []match.Attr
	for i := range n {
		name := rapid.StringMatching(`[a-z][a-z0-9_.-]{0,6}`).Draw(t, "name")
		if seen[name] {
			continue
		}
		seen[name] = true
		var v match.Value
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			v = match.Str(rapid.String().Draw(t, "s"))
		case 1:
			v = match.Int(rapid.Int64().Draw(t, "i"))
		case 2:
			v = match.MustFloat(rapid.Float64Range(-1e300, 1e300).Draw(t, "f"))
		case 3:
			v = match.Bool(i%2 == 0)
		}
		attrs = append(attrs, match.Attr{Name: name, Value: v})
	}
	return match.MustEvent(attrs...)
}

// TestEventCodecRoundTrip checks DecodeEvent(AppendEvent(e)) == e.
func TestEventCodecRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := genEvent(t)
		b := AppendEvent(nil, e)
		got, err := DecodeEvent(b)
		if err != nil {
			t.Fatalf("decode %v: %v", e, err)
		}
		if !got.Equal(e) {
			t.Fatalf("round trip %v -> %v", e, got)
		}
		if _, err := DecodeEvent(b[:len(b)-1]); err == nil && len(b) > 1 {
			t.Fatalf("truncated encoding of %v decoded", e)
		}
	})
}

// TestDecodeEventRejects lists corrupt inputs that must fail.
func TestDecodeEventRejects(t *testing.T) {
	good := AppendEvent(nil, match.MustEvent(match.Attr{Name: "a", Value: match.Int(1)}))
	for name, b := range map[string][]byte{
		"empty":     {},
		"version":   {9, 0},
		"count":     {1, 200, 1},
		"kind":      {1, 1, 1, 'a', 7, 0},
		"bool":      {1, 1, 1, 'a', 4, 2},
		"name":      {1, 1, 1, '1', 2, 2},
		"dup":       {1, 2, 1, 'a', 2, 2, 1, 'a', 2, 4},
		"nan":       append([]byte{1, 1, 1, 'a', 3}, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1),
		"trailing":  append(bytes.Clone(good), 0),
		"truncated": good[:len(good)-1],
	} {
		if _, err := DecodeEvent(b); err == nil {
			t.Errorf("%s: %x decoded without error", name, b)
		}
	}
}

// FuzzDecodeEvent checks that the decoder never panics and that whatever it
// accepts survives a round trip (varints need not be minimal on input).
func FuzzDecodeEvent(f *testing.F) {
	f.Add(AppendEvent(nil, match.MustEvent(
		match.Attr{Name: "s", Value: match.Str("IBM")},
		match.Attr{Name: "p", Value: match.MustFloat(9.5)},
		match.Attr{Name: "v", Value: match.Int(-100)},
		match.Attr{Name: "u", Value: match.Bool(true)})))
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEvent(b)
		if err != nil {
			return
		}
		again, err := DecodeEvent(AppendEvent(nil, e))
		if err != nil || !again.Equal(e) {
			t.Fatalf("%x decodes to %v which round-trips to %v, %v", b, e, again, err)
		}
	})
}
