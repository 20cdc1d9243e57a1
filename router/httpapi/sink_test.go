package httpapi

import (
	"errors"
	"maps"
	"testing"

	"github.com/sift-pubsub/sift/router/client"
)

// TestSink: a sink keeps what fits, in order; one message more than its
// bound marks it slow and drops what it held; an end is reported with
// what is queued.
func TestSink(t *testing.T) {
	s := newSink(3)
	for _, m := range []string{"a", "b", "c"} {
		s.push([]byte(m))
	}
	msgs, over, ended := s.take(nil)
	if len(msgs) != 3 || string(msgs[0]) != "a" || string(msgs[2]) != "c" || over || ended != nil {
		t.Fatalf("%q %v %v", msgs, over, ended)
	}
	for _, m := range []string{"d", "e", "f", "g"} {
		s.push([]byte(m))
	}
	if msgs, over, _ = s.take(nil); len(msgs) != 0 || !over {
		t.Fatalf("after overflow: %q over=%v", msgs, over)
	}
	s.push([]byte("h")) // a slow sink takes nothing more
	if msgs, over, _ = s.take(nil); len(msgs) != 0 || !over {
		t.Fatalf("after overflow: %q over=%v", msgs, over)
	}
	s2 := newSink(3)
	s2.push([]byte("x"))
	s2.end(errors.New("gone"))
	s2.end(errors.New("second"))
	if msgs, over, ended = s2.take(nil); len(msgs) != 1 || over || ended == nil || ended.Error() != "gone" {
		t.Fatalf("%q %v %v", msgs, over, ended)
	}
	select {
	case <-s2.wake:
	default:
		t.Fatal("no wake-up token")
	}
}

// TestTokenRoundTrip: checkpoint tokens survive encoding, whatever the
// pubend names, and the encoding is stable (pubends sorted).
func TestTokenRoundTrip(t *testing.T) {
	ct := client.CT{"r1": 1, "east coast": 1796157418800082, "a&b=c": 0, "ü": 42}
	tok := encodeCT(ct)
	got, err := decodeCT(tok)
	if err != nil || !maps.Equal(got, ct) {
		t.Fatalf("%q: %v %v", tok, got, err)
	}
	if tok != encodeCT(got) || tok != "a%26b%3Dc=0&east+coast=1796157418800082&r1=1&%C3%BC=42" {
		t.Fatalf("encoding %q", tok)
	}
}
