package wire

import "github.com/sift-pubsub/sift/match"

// borrowedMemory is what DecodeBorrowedDeliver decodes into, kept from
// item to item and frame to frame: one item's subscription ids, one
// event's attributes, and the arena its string values are copied into.
type borrowedMemory struct {
	ids   []uint64
	attrs []match.Attr
	used  int // attrs[:used] may hold values written during this call
	arena strArena
}

// idList returns the id memory for an item of k ids.
func (b *borrowedMemory) idList(k int) []uint64 {
	if k > cap(b.ids) {
		b.ids = make([]uint64, k)
	}
	return b.ids[:k:k]
}

// list returns the attribute memory for an event of n attributes.
func (b *borrowedMemory) list(n int) []match.Attr {
	if n > cap(b.attrs) {
		b.attrs = make([]match.Attr, n)
	}
	b.used = max(b.used, n)
	return b.attrs[:n:n]
}

// DecodeBorrowedDeliver decodes the body of a Deliver frame item by item
// and calls f with each item's subscription ids and event before it
// decodes the next, for a subscriber that reads each event while it
// handles it and keeps none (client.Options.OnBorrowedEvent). The ids and
// the event's attribute list are borrowed: they are the decoder's memory,
// reused for the next item, so they are valid only during that call of f.
// The names and string values are not: the names are the decoder's
// interned strings, the string values immutable copies (so body may be
// reused at once, and a value kept from an event stays valid). The copies
// are carved from chunks of 16 KiB shared by the values of many frames: a
// value kept keeps its chunk alive, never the frame. Once the decoder has
// seen its largest item and event, decoding allocates one chunk per 16 KiB
// of string values and nothing else.
//
// It reads and checks what Decode(TypeDeliver, body) does, in the same
// order, and returns the same error for the same body; but it is not all
// or nothing: the items before a malformed one have been handed to f. If
// f panics, the panic goes on, and the decoder stays usable.
func (d *EventDecoder) DecodeBorrowedDeliver(body []byte, f func(subs []uint64, e match.Event)) error {
	r := reader{b: body, borrow: true}
	defer d.endBorrow() // also if f panics
	n := r.count("deliver item count", 2)
	for range n {
		k, ok := deliverSubCount(&r)
		if !ok {
			break
		}
		subs := d.borrowed.idList(k)
		if !readIDs(&r, subs) {
			break
		}
		e := d.event(&r)
		if r.err != nil {
			break
		}
		f(subs, e)
	}
	return r.end(TypeDeliver.String())
}

// endBorrow ends a DecodeBorrowedDeliver call, however it ends: it clears
// the front of the attribute memory the call wrote, whose string values
// alias arena chunks or large values of their own (left there, the values
// past a later, narrower event's would keep them alive as long as the
// decoder).
func (d *EventDecoder) endBorrow() {
	clear(d.borrowed.attrs[:d.borrowed.used])
	d.borrowed.used = 0
}
