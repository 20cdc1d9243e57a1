package wire

import (
	"encoding/binary"

	"github.com/sift-pubsub/sift/match"
)

// AppendCheckedEvent is CheckEvent and AppendEvent in one pass over e, as
// a publisher needs them for every event: it appends e's encoding to b,
// or, for an event CheckEvent refuses, returns b unchanged with
// CheckEvent's error. One pass reads each event's memory once (a
// publisher's events are mostly cold in the cache) instead of twice.
func AppendCheckedEvent(b []byte, e match.Event) ([]byte, error) {
	if e.Len() > MaxEventAttrs {
		return b, tooManyAttrs(e.Len())
	}
	start := len(b)
	b = binary.AppendUvarint(b, uint64(e.Len()))
	for i := range e.Len() {
		a := e.At(i)
		b = appendString(b, a.Name)
		if a.Value.Kind() != match.KindString {
			b = appendValue(b, a.Value)
			continue
		}
		s := a.Value.AsString()
		if !validUTF8String(s) {
			return b[:start], invalidUTF8Attr(a.Name)
		}
		b = appendString(append(b, tagString), s)
	}
	return b, nil
}

// tooManyAttrs and invalidUTF8Attr are CheckEvent's refusals.
func tooManyAttrs(n int) error {
	return malformed("event has %d attributes, more than %d", n, MaxEventAttrs)
}

func invalidUTF8Attr(name string) error {
	return malformed("attribute %s: string is not valid UTF-8", name)
}
