package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
)

// Value tags of the binary event encoding. They are part of the protocol
// and independent of match.Kind's numbering.
const (
	tagString byte = 1
	tagInt    byte = 2
	tagFloat  byte = 3
	tagBool   byte = 4
)

// MaxEventAttrs bounds the attributes of one event on the wire.
const MaxEventAttrs = 1024

// AppendEvent appends the binary encoding of e: a varint attribute count,
// then per attribute in name order its name (varint length and bytes), a
// value tag, and the value: a string as varint length and bytes, an int as
// a zig-zag varint, a float as 8 little-endian bytes of its IEEE 754 bits,
// a bool as one byte 0 or 1.
func AppendEvent(b []byte, e match.Event) []byte {
	b = binary.AppendUvarint(b, uint64(e.Len()))
	for i := range e.Len() {
		a := e.At(i)
		b = appendString(b, a.Name)
		b = appendValue(b, a.Value)
	}
	return b
}

func appendValue(b []byte, v match.Value) []byte {
	switch v.Kind() {
	case match.KindString:
		b = append(b, tagString)
		return appendString(b, v.AsString())
	case match.KindInt:
		b = append(b, tagInt)
		return binary.AppendVarint(b, v.AsInt())
	case match.KindFloat:
		b = append(b, tagFloat)
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.AsFloat()))
	case match.KindBool:
		b = append(b, tagBool)
		if v.AsBool() {
			return append(b, 1)
		}
		return append(b, 0)
	}
	panic("wire: encoding an invalid value") // match.Event never holds one
}

// CheckEvent reports why e cannot travel on the wire (too many attributes,
// a string that is not valid UTF-8), or nil. Senders check before encoding
// so that the receiver never has to reject a whole batch.
func CheckEvent(e match.Event) error {
	if e.Len() > MaxEventAttrs {
		return tooManyAttrs(e.Len())
	}
	for i := range e.Len() {
		a := e.At(i)
		if a.Value.Kind() == match.KindString && !validUTF8String(a.Value.AsString()) {
			return invalidUTF8Attr(a.Name)
		}
	}
	return nil
}

// validUTF8String is utf8.ValidString with validUTF8's fast path.
func validUTF8String(s string) bool { return isASCII(s) || utf8.ValidString(s) }

// EventDecoder decodes binary events, interning attribute names so that a
// stream of events with the same attributes allocates each name once. The
// zero value is ready to use; it is not safe for concurrent use.
//
// A decoded event costs two allocations: its attribute list and one string
// holding all its string values (each value is a substring of it, so a
// value kept alone keeps its event's string bytes alive). With
// ShareStrings, or through DecodeOwnedPublish, events are carved from the
// frame instead, and DecodeBorrowedDeliver decodes into reused memory:
// see there.
type EventDecoder struct {
	// ShareStrings makes Decode copy a Publish or Deliver body into one
	// string and cut every string value out of it, and carve the events'
	// attribute lists from shared slabs: a few allocations per frame
	// instead of two per event. Any decoded event then keeps the whole
	// frame's memory (and its slab's neighbours) alive, so set it only
	// where events are short-lived (a router forwarding them).
	ShareStrings bool

	// Wanted, when not nil, makes the decoder keep only the attributes it
	// names: a router needs as values only the attributes its filters
	// name. Everything is still read and validated exactly as without it
	// (names, their order, tags, values, UTF-8, trailing bytes), so a
	// frame is refused, with the same error, whatever Wanted holds; only
	// the decoded events lack the attributes not wanted. Nil keeps all.
	Wanted *Wanted

	names map[string]string
	// pos holds, by position, the previous event's names and what the
	// decoder knows about them: a stream's events mostly have the same
	// attributes, and comparing bytes with the name in the same position
	// is cheaper than a map lookup.
	pos     []position
	wantFor *Wanted // the Wanted that pos[i].want answers for
	// shape holds the name references of the PublishDict event read last
	// (a prefix of them: one-byte references to entries), whose names
	// are pos's and were checked in order; an event of the same frame
	// whose references start the same has the same names there, and
	// needs neither their lookup nor their order checked again.
	shape []byte
	// slab backs the attribute lists of events that share their frame;
	// pinned counts the bytes of the frames its used part may keep alive
	// (see sharedFrameDone).
	slab   []match.Attr
	pinned int
	// strs and buf collect the string values of the event being decoded
	// (when it does not share its frame), so that they become one string.
	strs []strValue
	buf  []byte
	// borrowed is the memory DecodeBorrowedDeliver decodes into.
	borrowed borrowedMemory
}

// maxInterned bounds the name cache; beyond it names are allocated.
const maxInterned = 4096

// DecodeEvent decodes one event that must fill b exactly.
func (d *EventDecoder) DecodeEvent(b []byte) (match.Event, error) {
	r := reader{b: b}
	e := d.event(&r)
	if err := r.end("event"); err != nil {
		return match.Event{}, err
	}
	return e, nil
}

// DecodeEvent decodes one event that must fill b exactly, without interning.
func DecodeEvent(b []byte) (match.Event, error) {
	var d EventDecoder
	return d.DecodeEvent(b)
}

// event reads one event. Names must be valid attribute names in strictly
// increasing bytewise order (so the encoding is canonical and has no
// duplicates); floats must be finite; strings valid UTF-8. Having checked
// all of that as it reads, it builds the event with match.NewTrustedEvent
// (no second validation, sort or copy). Each attribute is decoded in
// place, into the list's next free slot: a slot of a dropped attribute
// (Wanted) is overwritten by the next.
func (d *EventDecoder) event(r *reader) match.Event {
	n := r.count("attribute count", 4)
	if r.err != nil {
		return match.Event{}
	}
	if n > MaxEventAttrs {
		r.fail("event has %d attributes, more than %d", n, MaxEventAttrs)
		return match.Event{}
	}
	attrs := d.attrList(r, n)
	d.strs, d.buf = d.strs[:0], d.buf[:0]
	d.syncWanted()
	b, o := r.b, 0 // the fast path's position is b[o:]; r.b catches up at the end
	kept, all := 0, d.Wanted == nil
	for i := range n {
		if !all {
			if next, ok := d.skipAttr(b, o, i); ok { // a dropped attribute, validated only
				o = next
				if i > 0 && !d.ordered(i) {
					r.fail("attribute %s: names not in strictly increasing order (after %s)", d.pos[i].name, d.pos[i-1].name)
					return match.Event{}
				}
				continue
			}
		}
		strs, buf := len(d.strs), len(d.buf)
		dst := &attrs[kept]
		next, ok := d.fastAttr(b, o, i, r, dst)
		if !ok { // anything unusual, errors included: the reader decides and words it
			r.b = b[o:]
			d.attr(r, i, dst)
			if r.err != nil {
				return match.Event{}
			}
			next = len(b) - len(r.b) // r.b is a suffix of b
		}
		o = next
		if i > 0 && !d.ordered(i) {
			r.fail("attribute %s: names not in strictly increasing order (after %s)", dst.Name, d.pos[i-1].name)
			return match.Event{}
		}
		if all {
			kept++
			continue
		}
		if !d.wanted(i) {
			d.strs, d.buf = d.strs[:strs], d.buf[:buf] // its string, if any, is not kept
			continue
		}
		if len(d.strs) > strs {
			d.strs[strs].attr = kept // setStrings fills the kept position
		}
		kept++
	}
	r.b = b[o:]
	attrs = d.keepAttrs(r, attrs, kept)
	d.setStrings(attrs)
	return match.NewTrustedEvent(attrs)
}

// position is what the decoder knows about the name last seen at one
// position of an event (see EventDecoder.pos).
type position struct {
	name    string
	want    wantState // whether name is in wantFor (wanted.go)
	ordered bool      // pos[i-1].name < name holds
}

// ordered reports whether attribute i-1's name is before attribute i's.
// Every name read goes through intern, so they are pos[i-1].name and
// pos[i].name; intern forgets the answer when either changes, and a
// stream of events with the same names compares them once.
func (d *EventDecoder) ordered(i int) bool {
	p := &d.pos[i]
	if !p.ordered {
		p.ordered = d.pos[i-1].name < p.name
	}
	return p.ordered
}

// attr reads attribute i into dst with the reader: the careful path,
// which words every error (and leaves dst alone on one).
func (d *EventDecoder) attr(r *reader, i int, dst *match.Attr) {
	name := d.name(r, i)
	v := d.value(r, i, name)
	if r.err == nil {
		setAttr(dst, name, v)
	}
}

// setAttr writes an attribute into a list slot. The name is written only
// if it differs: a reused list (borrowed decoding) mostly holds the same
// interned name at the same position already, and a skipped pointer store
// is a write barrier saved while the collector marks.
func setAttr(dst *match.Attr, name string, v match.Value) {
	if len(dst.Name) != len(name) || unsafe.StringData(dst.Name) != unsafe.StringData(name) {
		dst.Name = name
	}
	dst.Value = v
}

// name reads attribute i's name (see intern).
func (d *EventDecoder) name(r *reader, i int) string {
	p := r.bytes("attribute name")
	if r.err != nil {
		return ""
	}
	s, ok := d.intern(p, i)
	if !ok {
		r.fail("invalid attribute name %q", p)
	}
	return s
}

// intern returns the name p as attribute i: the previous event's name at
// i if the bytes are the same, else the interned copy, validated when
// first seen; false if p is not a valid attribute name.
func (d *EventDecoder) intern(p []byte, i int) (string, bool) {
	if i < len(d.pos) {
		if s := d.pos[i].name; s == string(p) {
			return s, true
		}
	}
	return d.internNew(p, i)
}

// internNew is intern for a name that is not the previous event's at i.
func (d *EventDecoder) internNew(p []byte, i int) (string, bool) {
	s, ok := d.names[string(p)]
	if !ok {
		s = string(p)
		if !match.ValidAttrName(s) {
			return "", false
		}
		if d.names == nil {
			d.names = make(map[string]string)
		}
		if len(d.names) < maxInterned {
			d.names[s] = s
		}
	}
	if i < len(d.pos) {
		d.pos[i] = position{name: s}
		if i+1 < len(d.pos) {
			d.pos[i+1].ordered = false // its predecessor changed
		}
	} else { // i == len(d.pos): names are read in order
		d.pos = append(d.pos, position{name: s})
	}
	return s, true
}

// value reads attribute i's tagged value. Its error messages name the
// attribute (they are built only on failure: this is the per-value hot
// path).
func (d *EventDecoder) value(r *reader, i int, name string) match.Value {
	if r.err != nil {
		return match.Value{}
	}
	v := d.tagged(r, i)
	if r.err != nil {
		if pe, ok := r.err.(*ProtocolError); ok {
			pe.Msg = "attribute " + name + ": " + pe.Msg
		}
	}
	return v
}

func (d *EventDecoder) tagged(r *reader, i int) match.Value {
	switch tag := r.byte("tag"); tag {
	case tagString:
		p := r.bytes("string")
		if r.err != nil {
			return match.Value{}
		}
		if !utf8.Valid(p) {
			r.fail("invalid UTF-8")
			return match.Value{}
		}
		return match.Str(d.str(r, p, len(r.b), i))
	case tagInt:
		return match.Int(r.varint("int"))
	case tagFloat:
		bits := r.fixed64("float")
		if r.err != nil {
			return match.Value{}
		}
		v, err := match.Float(math.Float64frombits(bits))
		if err != nil {
			r.fail("%v", err)
		}
		return v
	case tagBool:
		switch r.byte("bool") {
		case 0:
			return match.Bool(false)
		case 1:
			return match.Bool(true)
		}
		if r.err == nil {
			r.fail("bool byte is neither 0 nor 1")
		}
	default:
		if r.err == nil {
			r.fail("unknown value tag %d", tag)
		}
	}
	return match.Value{}
}
