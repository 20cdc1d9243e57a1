package client

import (
	"strings"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// Borrowed delivery (Options.OnBorrowedEvent).
//
// An owned event (a subscription's channel, Options.OnEvent) costs the
// reader two allocations: its attribute list and one string holding its
// string values, so that it keeps nothing else alive. A subscriber
// connection decodes every event it is delivered, once per connection,
// so these allocations, and the collections they cause, are a large share
// of a subscriber's CPU.
//
// A borrowed event is decoded by a decoder with wire's ShareStrings: the
// Deliver frame's body is copied once into one string that every string
// value of the frame's events is cut from, and the attribute lists are
// carved from slabs shared by many events, so a frame of n events costs a
// few allocations instead of 2n. That memory is never written again (an
// event kept against the rules keeps its frame alive; it is not
// corrupted), but the promise is narrower on purpose: an event is valid
// only during the call, so that the reader may later decode into memory it
// reuses from frame to frame without changing the API.

// deliverDecoder returns the reader's event decoder: sharing its frame's
// memory for borrowed delivery, copying for owned events.
func (c *Client) deliverDecoder() *wire.EventDecoder {
	return &wire.EventDecoder{ShareStrings: c.opts.OnBorrowedEvent != nil}
}

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
