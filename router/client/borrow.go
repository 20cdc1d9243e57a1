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
// A borrowed event is valid only during the call, so the reader decodes a
// Deliver frame item by item (wire.EventDecoder.DecodeBorrowedDeliver),
// each item into the memory of the one before it: one attribute list kept
// hot in the cache, and string values copied into append-only chunks
// shared by many frames (never rewritten, so a value kept stays valid and
// pins its 16 KiB chunk, not the frame): far fewer bytes allocated per
// event than an immutable copy of each frame body. Strings aliasing the
// reader's reused frame buffer would save a little more CPU but would
// change under a caller who kept one: not worth a string that is not a Go
// string. Unlike owned delivery, a frame is not all or nothing: the
// events before a malformed item have been delivered when the connection
// fails. Two other ways were measured and dropped: wire's ShareStrings
// (one copy of the frame body and shared attribute slabs per frame: no
// fewer bytes allocated, and the large per-frame allocations made the
// 3-router chain dearer), and a whole frame decoded into reused memory
// (about half the saving of item by item, whose memory stays in the
// cache). docs/benchmarks.md ("Borrowed delivery") has the figures.

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
