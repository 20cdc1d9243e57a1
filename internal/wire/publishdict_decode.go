package wire

import (
	"encoding/binary"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
)

// DecodeOwnedPublishDict decodes the body of a PublishDict frame that the
// caller hands over, as DecodeOwnedPublish does a Publish body: the
// events' strings and attribute lists alias body, so the caller must
// never modify it afterwards. It decodes the dictionary's references
// directly (a dropped attribute costs its value's validation, not a
// comparison of its name), and checks exactly what decoding the frame's
// expansion (ExpandPublishDict) as a Publish would, max included. The
// plain encoding of an event (Raw) is written out only when asked for, by
// RawAt, and Raw itself is made only by RawAll (see RawAt): a router
// forwards and delivers few of the events it reads.
func (d *EventDecoder) DecodeOwnedPublishDict(body []byte, max int) (*Publish, error) {
	return d.decodeOwnedDict(body, max, false)
}

// decodeOwnedDict is DecodeOwnedPublishDict, or DecodeOwnedPublishCompact
// if compact.
func (d *EventDecoder) decodeOwnedDict(body []byte, max int, compact bool) (*Publish, error) {
	t := TypePublishDict
	if compact {
		t = TypePublishCompact
	}
	r := ownedReader(body)
	defer d.sharedFrameDone(len(body))
	m := &Publish{Seq: r.uvarint("publish seq")}
	n := r.count("publish event count", 1)
	if r.err != nil {
		return nil, r.err
	}
	size := uvarintLen(m.Seq) + uvarintLen(uint64(n))
	x := &dictRaw{dictExpander: dictExpander{compact: compact}, body: body, spans: make([]int32, 0, n+1)}
	if compact {
		x.values = make([][]byte, 0, min(n, MaxDictValues))
	}
	d.shape = d.shape[:0] // the references are this frame's
	m.Events = make([]match.Event, 0, n)
	for range n {
		x.spans = append(x.spans, int32(len(body)-len(r.b)))
		e, plain := d.dictEvent(&r, &x.dictExpander)
		if r.err != nil {
			return nil, r.err
		}
		if size += plain; size > max {
			return nil, Errorf(CodeFrameTooLarge, "%s expands to more than %d bytes", t, max)
		}
		m.Events = append(m.Events, e)
	}
	if err := r.end(t.String()); err != nil {
		return nil, err
	}
	x.spans = append(x.spans, int32(len(body)))
	m.dict = x
	return m, nil
}

// RawAt returns the encoding of event i as received (Raw[i]). For a
// batch decoded from a PublishDict frame it is the plain encoding,
// written out when asked for (Raw stays nil until RawAll): the one asked
// for last is kept, so the core's delivery and forwarding of one event,
// which ask in a row, write it out once, and a batch needs no slice of
// every event's encoding when few of them go on.
func (m *Publish) RawAt(i int) []byte {
	x := m.dict
	switch {
	case x == nil || m.Raw != nil:
		return m.Raw[i]
	case x.last != i+1:
		x.last, x.lastRaw = i+1, x.expand(i)
	}
	return x.lastRaw
}

// RawAll fills Raw for every event (RawAt of each) and returns it.
func (m *Publish) RawAll() [][]byte {
	if m.dict != nil && m.Raw == nil {
		raw := make([][]byte, len(m.Events))
		for i := range raw {
			raw[i] = m.RawAt(i)
		}
		m.Raw = raw
	}
	return m.Raw
}

// dictRaw writes out the plain encodings of a decoded PublishDict
// batch's events: their places in the body and the frame's dictionary.
type dictRaw struct {
	dictExpander
	body  []byte
	spans []int32 // event i is body[spans[i]:spans[i+1]]
	arena []byte  // the plain encodings written out, back to back
	// lastRaw is event last-1's plain encoding, the one RawAt wrote out
	// last (last 0: none yet).
	last    int
	lastRaw []byte
}

// dictRawChunk is the size of a dictRaw's arena allocations.
const dictRawChunk = 4 << 10

// expand writes out event i. The event was checked when decoded; the
// dictionary is the whole frame's, which holds every entry the event
// refers to, and a name it writes out is not entered again.
func (x *dictRaw) expand(i int) []byte {
	ev := x.body[x.spans[i]:x.spans[i+1]]
	if cap(x.arena)-len(x.arena) < 2*len(ev)+16 {
		x.arena = make([]byte, 0, max(dictRawChunk, 2*len(ev)+16))
	}
	start := len(x.arena)
	out, _, err := x.event(x.arena, ev, 0, false)
	if err != nil {
		panic("wire: a decoded publish-dict event does not expand: " + err.Error())
	}
	x.arena = out
	return out[start:len(out):len(out)]
}

// dictEvent reads one event of a PublishDict body (a PublishCompact one
// if x.compact) with the decoder's machinery for Publish (interned names
// cached by position, the wanted names, shared strings and slab), names
// through x's dictionary, and returns it with the size of its plain
// encoding. Errors are the reader's.
func (d *EventDecoder) dictEvent(r *reader, x *dictExpander) (match.Event, int) {
	if x.compact {
		l := r.uvarint("layout reference")
		switch {
		case r.err != nil:
			return match.Event{}, 0
		case l != 0:
			return d.layoutEvent(r, x, l) // publishcompact_decode.go
		}
	}
	n := r.count("attribute count", x.minAttr())
	if r.err != nil {
		return match.Event{}, 0
	}
	if n > MaxEventAttrs {
		r.fail("event has %d attributes, more than %d", n, MaxEventAttrs)
		return match.Event{}, 0
	}
	attrs := d.attrList(r, n)
	d.strs, d.buf = d.strs[:0], d.buf[:0]
	d.syncWanted()
	b, o := r.b, 0
	plain := uvarintLen(uint64(n))
	kept, all := 0, d.Wanted == nil
	shape := d.shape
	for i := range n {
		var name string
		if i < len(shape) && o < len(b) && b[o] == shape[i] { // the names of the shape's events so far
			name, o, plain = d.pos[i].name, o+1, plain+len(x.names[shape[i]-1])
		} else {
			shape = shape[:min(i, len(shape))] // the rest of the event is read in full
			next, size := 0, 0
			name, next, size = d.dictName(r, x, b, o, i)
			if r.err != nil {
				return match.Event{}, 0
			}
			if i > 0 && !d.ordered(i) {
				r.fail("attribute %s: names not in strictly increasing order (after %s)", name, d.pos[i-1].name)
				return match.Event{}, 0
			}
			shape = appendShape(shape, b, o, next, i)
			o, plain = next, plain+size
		}
		keep := all || d.wanted(i)
		next, size := d.dictValue(r, x, b, o, i, name, keep, &attrs[kept], kept)
		if r.err != nil {
			return match.Event{}, 0
		}
		o, plain = next, plain+size
		if keep {
			kept++
		}
	}
	r.b = b[o:]
	d.shape = shape[:min(len(shape), n)]
	if x.compact && len(x.layouts) < MaxDictLayouts {
		names := make([]string, n)
		for i := range names {
			names[i] = d.pos[i].name
		}
		x.layouts = append(x.layouts, newLayout(names))
	}
	attrs = d.keepAttrs(r, attrs, kept)
	d.setStrings(attrs)
	return match.NewTrustedEvent(attrs), plain
}

// dictValue reads the value at offset o of b, attribute i named name,
// into dst (the event's kept-th kept attribute) if keep, else validates
// it only, and returns the offset after it and the size of its plain
// encoding. Errors are the reader's.
func (d *EventDecoder) dictValue(r *reader, x *dictExpander, b []byte, o, i int, name string, keep bool, dst *match.Attr, kept int) (int, int) {
	if x.compact && o < len(b) && (b[o] == tagString || b[o] >= tagStrRef) {
		return d.compactValue(r, x, b, o, name, keep, dst) // publishcompact_decode.go
	}
	if !keep {
		if next, ok := skipValue(b, o); ok {
			return next, next - o
		}
	}
	strs, buf := len(d.strs), len(d.buf)
	next, ok := d.fastValue(b, o, i, r, dst, name)
	if !ok { // anything unusual, errors included: the reader decides and words it
		r.b = b[o:]
		v := d.value(r, i, name)
		if r.err != nil {
			return 0, 0
		}
		setAttr(dst, name, v)
		next = len(b) - len(r.b)
	}
	switch {
	case !keep:
		d.strs, d.buf = d.strs[:strs], d.buf[:buf]
	case len(d.strs) > strs:
		d.strs[strs].attr = kept
	}
	return next, next - o
}

// appendShape extends the frame's shape (see EventDecoder.shape) with
// attribute i's name reference, the byte at offset o of b up to next, as
// long as every reference before it is in the shape and it is one byte
// naming an entry: a new name (0) or a longer reference ends the shape.
func appendShape(shape, b []byte, o, next, i int) []byte {
	if len(shape) == i && next == o+1 && b[o] != 0 {
		return append(shape, b[o])
	}
	return shape
}

// dictName reads attribute i's name reference at offset o of b and
// returns the name (interned, and the decoder's name at position i), the
// offset after it and the size of the name's plain encoding.
func (d *EventDecoder) dictName(r *reader, x *dictExpander, b []byte, o, i int) (string, int, int) {
	ref, next := dictUvarint(b, o)
	if next < 0 {
		r.b = b[o:]
		r.fail("attribute name reference: bad or truncated varint")
		return "", 0, 0
	}
	if ref != 0 {
		if ref > uint64(len(x.names)) {
			r.fail("attribute name reference %d beyond the frame's %d names", ref, len(x.names))
			return "", 0, 0
		}
		name := x.interned[ref-1]
		d.setPos(i, name)
		return name, next, len(x.names[ref-1])
	}
	p, end := fastBytes(b, next)
	if end < 0 {
		r.b = b[next:]
		r.bytes("attribute name") // fails, saying why
		return "", 0, 0
	}
	name, ok := d.intern(p, i)
	if !ok {
		r.fail("invalid attribute name %q", p)
		return "", 0, 0
	}
	if len(x.names) < MaxDictNames {
		x.names = append(x.names, b[next:end])
		x.interned = append(x.interned, name)
	}
	return name, end, end - next
}

// setPos makes name (interned) the decoder's name at position i, as
// intern does for a name read in full.
func (d *EventDecoder) setPos(i int, name string) {
	if i < len(d.pos) {
		if s := d.pos[i].name; len(s) == len(name) && unsafe.StringData(s) == unsafe.StringData(name) {
			return
		}
		d.pos[i] = position{name: name}
		if i+1 < len(d.pos) {
			d.pos[i+1].ordered = false // its predecessor changed
		}
		return
	}
	d.pos = append(d.pos, position{name: name})
}

// skipValue validates the tagged value at offset o of b without building
// it, returning the offset after it, or false: skipAttr's value part.
func skipValue(b []byte, o int) (int, bool) {
	if o >= len(b) {
		return 0, false
	}
	switch b[o] {
	case tagString:
		var p []byte
		if n := shortLen(b, o+1); n >= 0 {
			p, o = b[o+2:o+2+n], o+2+n
		} else if p, o = fastBytes(b, o+1); o < 0 {
			return 0, false
		}
		if !validUTF8(p) {
			return 0, false
		}
		return o, true
	case tagInt:
		_, n := binary.Uvarint(b[o+1:]) // binary.Varint's length and its refusals
		if n <= 0 {
			return 0, false
		}
		return o + 1 + n, true
	case tagFloat:
		if len(b)-o < 9 {
			return 0, false
		}
		if bits := binary.LittleEndian.Uint64(b[o+1:]); bits>>52&0x7ff == 0x7ff {
			return 0, false
		}
		return o + 9, true
	case tagBool:
		if len(b)-o < 2 || b[o+1] > 1 {
			return 0, false
		}
		return o + 2, true
	}
	return 0, false
}
