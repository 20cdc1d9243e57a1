package client

import (
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// Borrowed delivery (Options.OnBorrowedEvent).
//
// An owned event (a subscription's channel, Options.OnEvent) costs the
// reader two allocations, its attribute list and one string holding its
// string values, so that it keeps nothing else alive. A subscriber
// connection decodes every event delivered to it, so these allocations and
// the collections they cause are a large share of a subscriber's CPU.
//
// A borrowed event is valid only during the call, so the reader may decode
// it into memory it reuses from frame to frame: strings aliasing the
// reader's frame buffer, attribute lists from an arena, no allocation per
// frame once warm. That needs a decoding mode of internal/wire that this
// package cannot build from the outside (the decoder's reader and slabs
// are private); until wire has it, borrowed events are decoded exactly as
// owned ones, which keeps the promise (an owned event is valid during the
// call too). Decoding with wire's ShareStrings instead (one copy of the
// frame body and shared attribute slabs per frame) was measured and
// dropped: no fewer bytes allocated, and the large per-frame allocations
// made the 3-router chain ~6% dearer.

// callback returns the function every delivery goes to instead of the
// subscriptions' channels (OnEvent or OnBorrowedEvent), or nil.
func (c *Client) callback() func(*Subscription, match.Event) {
	if c.opts.OnBorrowedEvent != nil {
		return c.opts.OnBorrowedEvent
	}
	return c.opts.OnEvent
}

// KeepEvent returns a copy of e that shares no memory with it: its own
// attribute list, and its names and string values cut from one new
// string. An OnBorrowedEvent callback keeps KeepEvent(e) to use an event
// after it returns. It costs two allocations, what an owned event costs.
func KeepEvent(e match.Event) match.Event {
	n := 0
	for i := range e.Len() {
		a := e.At(i)
		n += len(a.Name)
		if a.Value.Kind() == match.KindString {
			n += len(a.Value.AsString())
		}
	}
	var buf strings.Builder // its String does not copy
	buf.Grow(n)
	for i := range e.Len() {
		a := e.At(i)
		buf.WriteString(a.Name)
		if a.Value.Kind() == match.KindString {
			buf.WriteString(a.Value.AsString())
		}
	}
	all := buf.String()
	attrs := make([]match.Attr, e.Len())
	off := 0
	for i := range attrs {
		a := e.At(i)
		attrs[i].Name, off = all[off:off+len(a.Name)], off+len(a.Name)
		attrs[i].Value = a.Value
		if a.Value.Kind() == match.KindString {
			k := len(a.Value.AsString())
			attrs[i].Value, off = match.Str(all[off:off+k]), off+k
		}
	}
	// A copy of a valid event, attribute for attribute: the names stay
	// valid, distinct and in order, the values valid.
	return match.NewTrustedEvent(attrs)
}
