package wire

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestHeartbeatRoundTrip: a heartbeat of any allowed padding decodes to
// what was encoded, and the padded one a router sends makes a frame well
// above the 42 bytes below which quic-go sends no stateless reset.
func TestHeartbeatRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &Heartbeat{Padding: rapid.IntRange(0, MaxHeartbeatPadding).Draw(t, "padding")}
		typ, body, rest, err := SplitFrame(AppendFrame(nil, m), 0)
		if err != nil || len(rest) != 0 || typ != TypeHeartbeat || !typ.Known() || typ.String() != "heartbeat" {
			t.Fatalf("split: type %v rest %d err %v", typ, len(rest), err)
		}
		got, err := Decode(typ, body)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip: got %#v, want %#v", got, m)
		}
	})
	if n := len(AppendFrame(nil, &Heartbeat{Padding: HeartbeatPadding})); n < 64 {
		t.Fatalf("a router's heartbeat frame is %d bytes, want at least 64", n)
	}
}

// TestLinkHelloIncarnation: the incarnation survives the round trip with
// and without Bloom parameters, and a hello without it is refused.
func TestLinkHelloIncarnation(t *testing.T) {
	for _, m := range []*LinkHello{
		{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"a", "b"}, Incarnation: 1<<63 | 5},
		{MinVersion: 1, MaxVersion: 1, Name: "b", Reach: []string{"b"}, Bloom: &BloomParams{M: 1024, K: 3, Hash: "bloom/v3-murmur3-double"}, Incarnation: 7},
	} {
		got, err := Decode(TypeLinkHello, m.AppendBody(nil))
		if err != nil {
			t.Fatalf("decode %+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip: got %#v, want %#v", got, m)
		}
		body := m.AppendBody(nil)
		if _, err := Decode(TypeLinkHello, body[:len(body)-1]); err == nil || !strings.Contains(err.Error(), "incarnation: truncated") {
			t.Fatalf("hello with 7 incarnation bytes: err %v, want truncated incarnation", err)
		}
	}
}

// TestBadHeartbeat lists malformed heartbeats.
func TestBadHeartbeat(t *testing.T) {
	big := (&Heartbeat{Padding: MaxHeartbeatPadding + 1}).AppendBody(nil)
	for _, c := range []struct {
		name string
		body []byte
		msg  string
	}{
		{"empty", nil, "truncated"},
		{"short padding", []byte{3, 0, 0}, "exceeds"},
		{"non-zero padding", []byte{2, 0, 1}, "not all zero"},
		{"too much padding", big, "exceed 1024"},
		{"trailing", []byte{0, 0}, "trailing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(TypeHeartbeat, c.body)
			if err == nil || CodeOf(err) != CodeMalformed || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v, want malformed %q", err, c.msg)
			}
		})
	}
}
