package wire

import "github.com/sift-pubsub/sift/match"

// borrowedMemory is what DecodeBorrowedDeliver decodes into, kept from
// item to item and frame to frame: one item's subscription ids and one
// event's attributes.
type borrowedMemory struct {
	on    bool // a DecodeBorrowedDeliver call is decoding
	ids   []uint64
	attrs []match.Attr
}

// grown notes a new attribute slab: during a borrowed decode it becomes
// the attribute memory reused (an event with more attributes than any
// before it).
func (b *borrowedMemory) grown(slab []match.Attr) {
	if b.on {
		b.attrs = slab
	}
}

// DecodeBorrowedDeliver decodes the body of a Deliver frame item by item
// and calls f with each item's subscription ids and event before it
// decodes the next, for a subscriber that reads each event while it
// handles it and keeps none (client.Options.OnBorrowedEvent). The ids and
// the event's attribute list are borrowed: they are the decoder's memory,
// reused for the next item, so they are valid only during that call of f.
// The names and string values are not: the names are the decoder's
// interned strings, the string values are cut from one immutable copy of
// body made per call (so body may be reused at once, and a value kept
// from an event stays valid, keeping that copy alive). Once the
// decoder has seen its largest item and event, decoding allocates that
// one copy per frame and nothing else.
//
// It reads and checks what Decode(TypeDeliver, body) does, in the same
// order, and returns the same error for the same body; but it is not all
// or nothing: the items before a malformed one have been handed to f. If
// f panics, the panic goes on, and the decoder stays usable.
func (d *EventDecoder) DecodeBorrowedDeliver(body []byte, f func(subs []uint64, e match.Event)) error {
	// One copy (none for an empty body): strings must not change under a
	// caller who kept one.
	r := reader{b: body, shared: string(body)}
	// The sharing decoders' slab is put back after, and the front of
	// d.borrowed.attrs this frame wrote (used) cleared, also if f panics.
	slab, pinned, used := d.slab, d.pinned, 0
	defer func() { d.endBorrow(slab, pinned, used) }()
	d.borrowed.on = true
	n := r.count("deliver item count", 2)
	for range n {
		k, ok := deliverSubCount(&r)
		if !ok {
			break
		}
		if k > cap(d.borrowed.ids) {
			d.borrowed.ids = make([]uint64, k)
		}
		subs := d.borrowed.ids[:k:k]
		if !readIDs(&r, subs) {
			break
		}
		d.slab = d.borrowed.attrs[:cap(d.borrowed.attrs)]
		e := d.event(&r)
		if r.err != nil {
			used = cap(d.borrowed.attrs) // a failed event wrote an unknown part
			break
		}
		used = max(used, e.Len())
		f(subs, e)
	}
	return r.end(TypeDeliver.String())
}

// endBorrow ends a DecodeBorrowedDeliver call, however it ends: it puts
// back the sharing decoders' slab and clears the front of the attribute
// memory the frame wrote, whose string values alias the frame's copy
// (left there, the values past a later, narrower event's would keep old
// frames alive as long as the decoder).
func (d *EventDecoder) endBorrow(slab []match.Attr, pinned, used int) {
	d.slab, d.pinned = slab, pinned
	d.borrowed.on = false
	clear(d.borrowed.attrs[:used])
}
