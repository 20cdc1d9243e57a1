package wire

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/sift-pubsub/sift/match"
)

// wideThenNarrow returns the body of a Deliver frame of one event with
// width attributes a00, a01, ..., the last one's value a 256 KiB string,
// and one of a single small attribute.
func wideThenNarrow(width int) (wide, narrow []byte) {
	attrs := make([]match.Attr, width)
	for i := range attrs {
		attrs[i] = match.Attr{Name: "a" + string(rune('0'+i/10)) + string(rune('0'+i%10)), Value: match.Int(int64(i))}
	}
	attrs[width-1].Value = match.Str(strings.Repeat("x", 256<<10))
	one := func(e match.Event) []byte {
		return (&Deliver{Items: []DeliverItem{{Subs: []uint64{1}, Event: e}}}).AppendBody(nil)
	}
	return one(match.MustEvent(attrs...)), one(match.MustEvent(match.Attr{Name: "a00", Value: match.Int(7)}))
}

// reachableAfterGC runs the collector to completion and reports whether
// p's object is still reachable; the caller keeps what should hold it
// (the decoder) alive past the call.
func reachableAfterGC(p weak.Pointer[byte]) bool {
	runtime.GC()
	runtime.GC()
	return p.Value() != nil
}

// TestBorrowedDeliverDropsOldFrames: once a borrowed frame's callbacks
// have returned and nobody kept one of its strings, its copy of the body
// must become garbage, even when the following frames' events have fewer
// attributes (the decoder's reused attribute memory must not keep the
// wide event's string values, and with them its frame, alive).
func TestBorrowedDeliverDropsOldFrames(t *testing.T) {
	var d EventDecoder
	wide, narrow := wideThenNarrow(12)
	var frame weak.Pointer[byte]
	if err := d.DecodeBorrowedDeliver(wide, func(_ []uint64, e match.Event) {
		frame = weak.Make(unsafe.StringData(e.At(e.Len() - 1).Value.AsString())) // inside the frame's copy
	}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := d.DecodeBorrowedDeliver(narrow, func([]uint64, match.Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	if reachableAfterGC(frame) {
		t.Fatal("a 256 KiB borrowed frame is still reachable through the decoder after narrower frames")
	}
	runtime.KeepAlive(&d)
}

// TestBorrowedDeliverCallbackPanic: a callback that panics (and a caller
// that recovers) leaves the decoder as it was: events decoded afterwards
// with ShareStrings, which carve their attribute lists from the decoder's
// slab, are not overwritten by a later borrowed decode.
func TestBorrowedDeliverCallbackPanic(t *testing.T) {
	var d EventDecoder
	_, narrow := wideThenNarrow(2)
	func() {
		defer func() { recover() }()
		d.DecodeBorrowedDeliver(narrow, func([]uint64, match.Event) { panic("callback") })
		t.Fatal("the callback's panic did not propagate")
	}()
	d.ShareStrings = true
	m, err := d.Decode(TypeDeliver, narrow)
	if err != nil {
		t.Fatal(err)
	}
	owned := m.(*Deliver).Items[0].Event
	before := owned.String()
	d.ShareStrings = false
	other, _ := wideThenNarrow(8) // writes the front of the borrowed memory

	if err := d.DecodeBorrowedDeliver(other, func([]uint64, match.Event) {}); err != nil {
		t.Fatal(err)
	}
	if got := owned.String(); got != before {
		t.Fatalf("an owned event changed under a later borrowed decode: %s, was %s", got, before)
	}
}
