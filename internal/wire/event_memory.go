package wire

import "github.com/sift-pubsub/sift/match"

// Where a decoded event's memory comes from. An EventDecoder decodes in
// one of three ways, chosen by its caller:
//
//   - owned (Decode, DecodeEvent): each event gets its own attribute list
//     and one string holding all its string values (setStrings);
//   - shared (ShareStrings, DecodeOwnedPublish): attribute lists are
//     carved from the decoder's slab and strings cut from the frame body
//     (the reader's shared string);
//   - borrowed (DecodeBorrowedDeliver): one attribute list reused event
//     after event, strings copied into the decoder's arena (strarena.go).

// strValue locates a string value of the event being decoded: attribute
// attr's value is buf[off:off+n].
type strValue struct{ attr, off, n int }

// attrSlab is the number of attributes carved from one slab allocation for
// events that share their frame (48 bytes each).
const attrSlab = 512

// maxSlabPinned bounds the bytes of earlier frames a decoder's slab may
// keep alive: its used part holds the attribute lists of decoded events,
// whose strings alias their frames, so without a bound an idle reader
// would keep up to attrSlab routed frames (one kept attribute each: up to
// hundreds of MiB of large frames) reachable.
const maxSlabPinned = 1 << 20

// attrList returns a list for n attributes of an event r reads: the
// borrowed list when decoding borrowed, the front of the slab when the
// event shares its frame (taken only by keepAttrs, once the event knows
// how many it keeps), else its own allocation (the event may be kept).
func (d *EventDecoder) attrList(r *reader, n int) []match.Attr {
	switch {
	case r.borrow:
		return d.borrowed.list(n)
	case r.shared == "":
		return make([]match.Attr, n)
	}
	if n > len(d.slab) {
		d.slab, d.pinned = make([]match.Attr, max(n, attrSlab)), 0
	}
	return d.slab[:n:n]
}

// sharedFrameDone is called after decoding a frame of size bytes whose
// events share it: once the slab may pin more than maxSlabPinned bytes of
// frames, the decoder lets it go (the events decoded so far keep it as
// long as they live; the next frame starts a new one).
func (d *EventDecoder) sharedFrameDone(size int) {
	if d.pinned += size; d.pinned > maxSlabPinned {
		d.slab, d.pinned = nil, 0
	}
}

// keepAttrs cuts the event's list to the kept attributes, taking them
// from the slab when the list is carved from it (shared).
func (d *EventDecoder) keepAttrs(r *reader, attrs []match.Attr, kept int) []match.Attr {
	if r.shared != "" && !r.borrow {
		d.slab = d.slab[kept:]
	}
	return attrs[:kept:kept]
}

// str returns string value p of attribute i, just read by r (rest bytes
// of the body follow it), as the decoding way in use wants it: a
// substring of the shared body, a copy in the arena, or, owned, a place
// in buf that setStrings turns into a string once the event is read (""
// until then).
func (d *EventDecoder) str(r *reader, p []byte, rest, i int) string {
	switch {
	case r.shared != "":
		end := len(r.shared) - rest
		return r.shared[end-len(p) : end]
	case r.borrow:
		return d.borrowed.arena.str(p)
	}
	return d.ownedStr(p, i)
}

// ownedStr is str for an owned event.
func (d *EventDecoder) ownedStr(p []byte, i int) string {
	d.strs = append(d.strs, strValue{attr: i, off: len(d.buf), n: len(p)})
	d.buf = append(d.buf, p...)
	return ""
}

// setStrings gives the event's string values (collected in buf) one
// string for all of them.
func (d *EventDecoder) setStrings(attrs []match.Attr) {
	if len(d.strs) == 0 {
		return
	}
	all := string(d.buf)
	for _, s := range d.strs {
		attrs[s.attr].Value = match.Str(all[s.off : s.off+s.n])
	}
}
