package wire

import (
	"encoding/binary"

	"github.com/sift-pubsub/sift/match"
)

// PublishDict is a Publish whose attribute names travel through a
// dictionary of the frame (client version VersionPublishDict): an
// attribute's name is written out once per frame, the first time it
// occurs, and as a small number after that. A topic event's names are
// about half of its plain encoding, so a publisher's stream carries that
// much fewer bytes, and its QUIC connection fewer packets, per event. The
// dictionary lives and dies with its frame: frames stay independent of
// each other, as plain Publish frames are.
//
// Its body is a Publish body in which every attribute's name is a uint
// reference r instead of a string: r = 0 is followed by the name (string),
// which becomes the dictionary's next entry while it has fewer than
// MaxDictNames; r >= 1 names the dictionary's r-th entry. Everything else
// (sequence number, counts, tags, values, name order) is Publish's.
type PublishDict struct{ Publish }

// MaxDictNames bounds a PublishDict frame's dictionary: the names written
// out beyond it are not entered (encoder and decoder apply the same rule),
// so a frame's dictionary is at most this large whatever it holds.
const MaxDictNames = 4096

// Type returns TypePublishDict.
func (*PublishDict) Type() Type { return TypePublishDict }

// AppendBody appends the Publish body with the names through the frame's
// dictionary.
func (m *PublishDict) AppendBody(b []byte) []byte { return appendDictBody(b, &m.Publish, false) }

// appendDictBody appends m as the body of a PublishDict, or of a
// PublishCompact if compact.
func appendDictBody(b []byte, m *Publish, compact bool) []byte {
	b = binary.AppendUvarint(b, m.Seq)
	b = binary.AppendUvarint(b, uint64(len(m.Events)))
	d := dictEncoder{compact: compact}
	for _, e := range m.Events {
		b, _, _ = d.appendEvent(b, e, false)
	}
	return b
}

// decodePublishDict expands the body into its Publish body and decodes
// that as Publish (Raw aliases the expansion).
func (d *EventDecoder) decodePublishDict(r *reader) *PublishDict {
	return &PublishDict{Publish: d.decodeExpanded(r, false)}
}

// decodeExpanded expands a PublishDict body (a PublishCompact body if
// compact) into its Publish body and decodes that as Publish.
func (d *EventDecoder) decodeExpanded(r *reader, compact bool) Publish {
	plain, err := expandDict(nil, r.b, HardMaxFrame, compact)
	if err != nil {
		r.err, r.b = err, nil
		return Publish{}
	}
	r.b = nil
	pr := ownedReader(plain)
	if !d.ShareStrings {
		pr.shared = ""
	}
	m := d.decodePublish(&pr)
	if err := pr.end(TypePublish.String()); err != nil {
		r.err = err
	}
	return *m
}

// ExpandPublishDict appends to dst the Publish body that the PublishDict
// body holds: the same sequence number, counts and values, each name
// written out. It checks the structure it needs to expand (references
// within the dictionary, known tags, lengths within the body, nothing
// left over) and refuses an expansion longer than max bytes
// (CodeFrameTooLarge: a plain Publish frame must fit the same limit); the
// rest (names, their order, values) is for the Publish decoder to check
// on the result, so a PublishDict is refused exactly when its expansion
// would be.
func ExpandPublishDict(dst, body []byte, max int) ([]byte, error) {
	return expandDict(dst, body, max, false)
}

// expandDict is ExpandPublishDict, or ExpandPublishCompact if compact.
func expandDict(dst, body []byte, max int, compact bool) ([]byte, error) {
	t := TypePublishDict
	if compact {
		t = TypePublishCompact
	}
	r := reader{b: body}
	seq := r.uvarint("publish seq")
	n := r.count("publish event count", 1)
	if r.err != nil {
		return nil, r.err
	}
	out := binary.AppendUvarint(binary.AppendUvarint(dst, seq), uint64(n))
	limit := len(dst) + max
	x := dictExpander{compact: compact}
	b, o := r.b, 0
	for range n {
		var err error
		if out, o, err = x.event(out, b, o, true); err != nil {
			return nil, err
		}
		if len(out) > limit {
			return nil, Errorf(CodeFrameTooLarge, "%s expands to more than %d bytes", t, max)
		}
	}
	if o != len(b) {
		return nil, malformed("%s: %d trailing bytes", t, len(b)-o)
	}
	return out, nil
}

// dictExpander writes out a PublishDict body's names. It works on an
// offset into the body, as fastAttr does.
type dictExpander struct {
	// names are the dictionary's entries as they are written out: the
	// length prefix and the bytes, aliasing the body; interned are the
	// same names as a decoder interned them (DecodeOwnedPublishDict).
	names    [][]byte
	interned []string
	// compact says the body is a PublishCompact's; values are then its
	// string values entered so far, each as it is written out (tag,
	// length and bytes), aliasing the body, and layouts its events' name
	// lists entered so far (publishcompact.go).
	compact bool
	values  [][]byte
	layouts []dictLayout
}

// minAttr is the fewest bytes an attribute of a PublishDict event takes
// (a name reference, a tag, a value byte), or of a PublishCompact one (a
// name reference and a one-byte string reference).
func (x *dictExpander) minAttr() int {
	if x.compact {
		return 2
	}
	return 3
}

// event expands the event at offset o of b (PublishDict's, or
// PublishCompact's if x.compact). It enters what the event writes out
// into the frame's dictionaries if enter is set (reading the frame in
// order; not when writing out one event of a frame already read).
func (x *dictExpander) event(out, b []byte, o int, enter bool) ([]byte, int, error) {
	if x.compact {
		return x.compactEvent(out, b, o, enter) // publishcompact.go
	}
	return x.namedEvent(out, b, o, enter)
}

// namedEvent expands a PublishDict event at offset o of b: its attribute
// count, then per attribute the name its reference stands for and the
// tag and value as they are (values through compactValue if x.compact).
func (x *dictExpander) namedEvent(out, b []byte, o int, enter bool) ([]byte, int, error) {
	n, o := dictUvarint(b, o)
	switch {
	case o < 0:
		return nil, 0, malformed("attribute count: bad or truncated varint")
	case n > MaxEventAttrs:
		return nil, 0, malformed("event has %d attributes, more than %d", n, MaxEventAttrs)
	case n > uint64(len(b)-o)/uint64(x.minAttr()):
		return nil, 0, malformed("attribute count %d exceeds what the %d bytes left could hold", n, len(b)-o)
	}
	out = binary.AppendUvarint(out, n)
	for range n {
		ref, next := dictUvarint(b, o)
		if next < 0 {
			return nil, 0, malformed("attribute name reference: bad or truncated varint")
		}
		o = next
		if ref == 0 {
			start := o
			if _, o = fastBytes(b, o); o < 0 {
				return nil, 0, malformed("attribute name: bad or truncated length")
			}
			if enter && len(x.names) < MaxDictNames {
				x.names = append(x.names, b[start:o])
			}
			out = append(out, b[start:o]...)
		} else if ref <= uint64(len(x.names)) {
			out = append(out, x.names[ref-1]...)
		} else {
			return nil, 0, malformed("attribute name reference %d beyond the frame's %d names", ref, len(x.names))
		}
		if x.compact {
			var err error
			if out, o, err = x.compactValue(out, b, o, enter); err != nil {
				return nil, 0, err
			}
			continue
		}
		k, err := valueLen(b, o)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, b[o:o+k]...)
		o += k
	}
	return out, o, nil
}

// dictUvarint reads a uvarint at offset o of b, returning the offset
// after it, or -1.
func dictUvarint(b []byte, o int) (uint64, int) {
	if o < len(b) && b[o] < 0x80 {
		return uint64(b[o]), o + 1
	}
	if o >= len(b) {
		return 0, -1
	}
	v, k := binary.Uvarint(b[o:])
	if k <= 0 {
		return 0, -1
	}
	return v, o + k
}

// valueLen returns the length of the tag and value at offset o of b.
func valueLen(b []byte, o int) (int, error) {
	if o >= len(b) {
		return 0, malformed("attribute value tag: truncated")
	}
	var n int
	switch b[o] {
	case tagString:
		if k := shortLen(b, o+1); k >= 0 {
			return 2 + k, nil
		}
		_, end := fastBytes(b, o+1)
		if end < 0 {
			return 0, malformed("string value: bad or truncated length")
		}
		return end - o, nil
	case tagInt:
		if o+1 < len(b) && b[o+1] < 0x80 {
			return 2, nil
		}
		_, end := dictUvarint(b, o+1)
		if end < 0 {
			return 0, malformed("int value: bad or truncated varint")
		}
		return end - o, nil
	case tagFloat:
		n = 9
	case tagBool:
		n = 2
	default:
		return 0, malformed("unknown value tag %d", b[o])
	}
	if n > len(b)-o {
		return 0, malformed("attribute value: %d of %d bytes", len(b)-o, n)
	}
	return n, nil
}

// dictEncoder is the encoding side of a frame's dictionary: the names
// entered so far, with a cache by attribute position (a stream's events
// mostly have the same names in the same places, and comparing with the
// name last seen there is cheaper than a map lookup).
type dictEncoder struct {
	refs  map[string]uint64 // 1-based
	order []string          // the entries, in order
	pos   []dictPos
	gen   uint64 // pos entries of another generation are stale
	// compact makes the encoding PublishCompact's: values counts the
	// string values entered, and strs caches some of them by hash
	// (appendStr), entries of another generation than vgen being stale;
	// strUndo are the slots the last event taken in changed, as they
	// were, followed, from undoFrom, by those the event being encoded
	// changed (truncate puts back those from undoFrom: the event being
	// encoded's, or, from Undo, with undoFrom 0, the last event's).
	compact  bool
	values   int
	strs     *[strCacheSlots]strEntry
	vgen     uint64
	strUndo  []strUndo
	undoFrom int
	// layouts counts the layouts entered; last is the last one entered
	// and prev the one before it (truncate's, when an event that entered
	// last is taken back).
	layouts    int
	last, prev encLayout
}

type dictPos struct {
	name string
	ref  uint64
	gen  uint64
}

// reset empties the dictionary for a new frame.
func (d *dictEncoder) reset() {
	clear(d.refs)
	d.order = d.order[:0]
	d.values = 0
	d.vgen++
	d.strUndo, d.undoFrom = d.strUndo[:0], 0
	d.layouts, d.last, d.prev = 0, encLayout{names: d.last.names[:0]}, encLayout{names: d.prev.names[:0]}
	d.gen++
}

// truncate forgets the name entries after the first n, the string
// value entries after the first values and the layouts after the first
// layouts: the last event encoded taken back (the string cache's slots
// it changed are put back as they were, so that the next event encodes
// as if it had never been).
func (d *dictEncoder) truncate(n, values, layouts int) {
	switch layouts {
	case d.layouts:
	case d.layouts - 1: // the event taken back entered last
		d.layouts = layouts
		d.last, d.prev = d.prev, encLayout{names: d.last.names[:0]}
	default:
		d.layouts = layouts
		d.last, d.prev = encLayout{names: d.last.names[:0]}, encLayout{names: d.prev.names[:0]}
	}
	if values != d.values { // the event's strings: its slots as they were
		for i := len(d.strUndo) - 1; i >= d.undoFrom; i-- {
			d.strs[d.strUndo[i].slot] = d.strUndo[i].old
		}
		d.strUndo, d.values = d.strUndo[:d.undoFrom], values
	}
	if n == len(d.order) {
		return
	}
	for _, s := range d.order[n:] {
		delete(d.refs, s)
	}
	d.order = d.order[:n]
	d.gen++
}

// ref returns the reference of name at attribute position i, entering it
// when new: 0 when it must be written out. (appendEvent checks the
// position's cache first.)
func (d *dictEncoder) ref(name string, i int) uint64 {
	r, ok := d.refs[name]
	if !ok {
		if len(d.order) >= MaxDictNames {
			return 0
		}
		if d.refs == nil {
			d.refs = make(map[string]uint64)
		}
		d.order = append(d.order, name)
		d.refs[name] = uint64(len(d.order))
		d.remember(i, name, 0) // written out this once
		return 0
	}
	d.remember(i, name, r)
	return r
}

func (d *dictEncoder) remember(i int, name string, ref uint64) {
	if i >= len(d.pos) {
		if i >= MaxEventAttrs {
			return
		}
		d.pos = append(d.pos, make([]dictPos, i+1-len(d.pos))...)
	}
	if ref == 0 {
		ref = d.refs[name]
	}
	d.pos[i] = dictPos{name: name, ref: ref, gen: d.gen}
}

// appendEvent appends e with its names through the dictionary, checking
// it as AppendCheckedEvent does when check is set (then a refused event
// leaves b and the dictionary unchanged), and returns the size of e's
// plain encoding (AppendEvent's).
func (d *dictEncoder) appendEvent(b []byte, e match.Event, check bool) ([]byte, int, error) {
	if check && e.Len() > MaxEventAttrs {
		return b, 0, tooManyAttrs(e.Len())
	}
	if d.compact {
		return d.appendCompactEvent(b, e, check) // publishcompact.go
	}
	return d.appendNamedEvent(b, e, check)
}

// appendNamedEvent is appendEvent of a PublishDict event (with
// PublishCompact's values if d.compact).
func (d *dictEncoder) appendNamedEvent(b []byte, e match.Event, check bool) ([]byte, int, error) {
	start, entries, values := len(b), len(d.order), d.values
	b = binary.AppendUvarint(b, uint64(e.Len()))
	plain := len(b) - start
	for i := range e.Len() {
		a := e.At(i)
		var r uint64
		if i < len(d.pos) && d.pos[i].gen == d.gen && d.pos[i].name == a.Name {
			r = d.pos[i].ref // the usual case: the name the last event had here
		} else {
			r = d.ref(a.Name, i)
		}
		switch {
		case r == 0:
			b = appendString(append(b, 0), a.Name)
		case r < 0x80:
			b = append(b, byte(r))
		default:
			b = binary.AppendUvarint(b, r)
		}
		if len(a.Name) < 0x80 {
			plain += 1 + len(a.Name)
		} else {
			plain += uvarintLen(uint64(len(a.Name))) + len(a.Name)
		}
		if d.compact {
			var ok bool
			if b, ok = d.appendCompactValue(b, a.Value, check); !ok { // publishcompact.go
				d.truncate(entries, values, d.layouts)
				return b[:start], 0, invalidUTF8Attr(a.Name)
			}
			plain += plainValueLen(a.Value)
			continue
		}
		vat := len(b)
		if a.Value.Kind() == match.KindString {
			s := a.Value.AsString()
			if check && !validUTF8String(s) {
				d.truncate(entries, values, d.layouts)
				return b[:start], 0, invalidUTF8Attr(a.Name)
			}
			b = appendString(append(b, tagString), s)
		} else {
			b = appendValue(b, a.Value)
		}
		plain += len(b) - vat
	}
	return b, plain, nil
}

// DictBatch accumulates events for one PublishDict frame, or one
// PublishCompact frame (SetCompact), as PublishBatch does for Publish:
// each event is checked and encoded once, straight into the batch, and
// the finished frame is the batch's own buffer.
type DictBatch struct {
	f     frameBuf
	d     dictEncoder
	plain int // the events' plain encoding size (what a Publish would carry)
	last  dictMark
}

// dictMark is where the batch stood before its last event.
type dictMark struct{ buf, entries, values, layouts, plain int }

// AddChecked checks e as CheckEvent does and adds it to the batch,
// returning the size of its plain encoding (AppendEvent's), against which
// a router's frame limit counts; a refused event leaves the batch as it
// was.
func (p *DictBatch) AddChecked(e match.Event) (int, error) {
	p.f.room()
	mark := dictMark{buf: len(p.f.buf), entries: len(p.d.order), values: p.d.values, layouts: p.d.layouts, plain: p.plain}
	b, plain, err := p.d.appendEvent(p.f.buf, e, true)
	if err != nil {
		return 0, err
	}
	p.f.buf, p.last = b, mark
	p.plain += plain
	p.f.n++
	return plain, nil
}

// Undo takes back the event of the last AddChecked (once): a publisher
// that finds the event does not fit sends the batch without it and adds
// it to the next, where it defines its names again.
func (p *DictBatch) Undo() {
	if p.f.n == 0 || p.last.buf == 0 {
		return
	}
	p.f.buf = p.f.buf[:p.last.buf]
	p.d.truncate(p.last.entries, p.last.values, p.last.layouts)
	p.plain = p.last.plain
	p.f.n--
	p.last = dictMark{}
}

// Len returns the number of events in the batch.
func (p *DictBatch) Len() int { return p.f.n }

// Size returns the size of the events' plain encoding: the bytes a
// router's frame limit counts (ExpandPublishDict's max).
func (p *DictBatch) Size() int { return p.plain }

// WireSize returns the encoded size of the events so far, as they travel.
func (p *DictBatch) WireSize() int { return p.f.size() }

// Frame returns the batch as a PublishDict frame with sequence number
// seq, built in place: it aliases the batch and is valid until the next
// AddChecked or Reset.
func (p *DictBatch) Frame(seq uint64) []byte {
	t := TypePublishDict
	if p.d.compact {
		t = TypePublishCompact
	}
	return p.f.frame(t, seq, uint64(p.f.n))
}

// SetCompact makes the batch a PublishCompact one (client version
// VersionCompact) or a PublishDict one, emptying it.
func (p *DictBatch) SetCompact(on bool) {
	p.Reset()
	p.d.compact = on
}

// Reset empties the batch and its dictionary, keeping their memory.
func (p *DictBatch) Reset() {
	p.f.reset()
	p.d.reset()
	p.plain = 0
	p.last = dictMark{}
}
