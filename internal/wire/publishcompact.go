package wire

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
)

// VersionCompact is the client version from which a client may send its
// events as PublishCompact frames (name lists, string values and decimal
// numbers written compactly) as well as PublishDict and Publish frames.
// It changes nothing else, so a client of this version publishes
// PublishDict frames to a router of an older one.
const VersionCompact uint64 = 5

// PublishCompact is a PublishDict whose events' names and values travel
// compactly too (client version VersionCompact): an event with the names
// of one before it in the frame refers to that event's list of names (its
// layout) in one number; a string value is written out the first time it
// occurs in the frame and as a small number after that; and a float that
// is a short decimal (a price in cents) as its digits. A topic event's
// name references, string values (symbol, venue, side, sector) and price
// are most of what PublishDict still carries per event, so the
// publisher's stream carries that much fewer bytes, and its QUIC
// connection and the router's fewer packets, per event. Like the names'
// dictionary, the layouts' and values' live and die with their frame.
//
// Its body is a PublishDict body in which each event starts with a uint
// layout reference l: l = 0 is followed by a PublishDict event, whose
// list of names becomes the frame's next layout while it has fewer than
// MaxDictLayouts; l >= 1 stands for the l-th layout's names, and only the
// values follow, one per name. A value may also be:
//   - tag 5 (string reference) and a uint r >= 1: the frame's r-th string
//     value, counting every tag-1 string value of the frame in order while
//     fewer than MaxDictValues have been counted (strings written out
//     beyond that are not entered);
//   - a tag t >= 16 alone: the string reference r = t - 15 (the first 240
//     values in one byte);
//   - tag 6 (decimal) and a uint x: the float m / 10^s, where s is x's
//     low 3 bits and m the zig-zag integer x >> 3, with |m| <= 2^53 (so
//     that m and the quotient, an IEEE 754 division, are exact and the
//     same everywhere).
//
// The router expands a frame to the Publish body it stands for: names as
// PublishDict's, a layout as its count and names (each with a minimal
// length prefix), a string reference as the string it names (tag 1), a
// decimal as the float (tag 3).
type PublishCompact struct{ Publish }

// MaxDictValues and MaxDictLayouts bound a PublishCompact frame's
// dictionaries of string values and layouts, as MaxDictNames does its
// names'.
const (
	MaxDictValues  = 4096
	MaxDictLayouts = 4096
)

// dictLayout is one layout of a PublishCompact frame: an event's names
// (interned when a decoder entered it), and the size of their plain
// encoding with the attribute count.
type dictLayout struct {
	names []string
	plain int
	// keep says which names a decoder keeps (kept of them) for the
	// Wanted keepSet was computed for (see keepFor).
	keep    []bool
	kept    int
	wanted  *Wanted
	keepSet bool
}

// keepFor returns which of the layout's names a decoder with Wanted w
// keeps (all when w is nil), computing it when w is not the one it last
// answered for.
func (l *dictLayout) keepFor(w *Wanted) []bool {
	if l.keepSet && l.wanted == w {
		return l.keep
	}
	l.keep, l.kept = make([]bool, len(l.names)), 0
	for i, name := range l.names {
		if w == nil || w.Has(name) {
			l.keep[i] = true
			l.kept++
		}
	}
	l.wanted, l.keepSet = w, true
	return l.keep
}

// newLayout returns the layout of names.
func newLayout(names []string) dictLayout {
	l := dictLayout{names: names, plain: uvarintLen(uint64(len(names)))}
	for _, s := range names {
		l.plain += uvarintLen(uint64(len(s))) + len(s)
	}
	return l
}

// compactEvent expands a PublishCompact event at offset o of b: a layout
// reference, then a PublishDict event (entering its layout if enter) or
// the values of the layout's names. A layout's names are written out
// canonically (minimal length prefixes) whatever the event that entered
// it wrote.
func (x *dictExpander) compactEvent(out, b []byte, o int, enter bool) ([]byte, int, error) {
	l, o := dictUvarint(b, o)
	if o < 0 {
		return nil, 0, malformed("layout reference: bad or truncated varint")
	}
	if l == 0 {
		start := len(out)
		out, next, err := x.namedEvent(out, b, o, enter)
		if err == nil && enter && len(x.layouts) < MaxDictLayouts {
			x.layouts = append(x.layouts, newLayout(plainNames(out[start:])))
		}
		return out, next, err
	}
	if l > uint64(len(x.layouts)) {
		return nil, 0, malformed("layout reference %d beyond the frame's %d layouts", l, len(x.layouts))
	}
	names := x.layouts[l-1].names
	out = binary.AppendUvarint(out, uint64(len(names)))
	for _, name := range names {
		out = appendString(out, name)
		var err error
		if out, o, err = x.compactValue(out, b, o, enter); err != nil {
			return nil, 0, err
		}
	}
	return out, o, nil
}

// plainNames returns the names of a plain event that namedEvent wrote
// out (so its lengths and tags are known to be whole).
func plainNames(ev []byte) []string {
	n, o := dictUvarint(ev, 0)
	names := make([]string, 0, n)
	for range n {
		p, next := fastBytes(ev, o)
		names = append(names, string(p))
		k, _ := valueLen(ev, next)
		o = next + k
	}
	return names
}

// Value tags of PublishCompact frames only.
const (
	tagStrRef  byte = 5
	tagDecimal byte = 6
	// tagShortRef and the tags above it are string references by
	// themselves: tag t names entry t - tagShortRef + 1.
	tagShortRef byte = 16
)

// maxDecimalScale is the largest power of ten a decimal divides by: s
// takes three bits.
const maxDecimalScale = 7

// maxDecimalZigzag bounds a decimal's zig-zag mantissa: |m| <= 2^53.
const maxDecimalZigzag = 1 << 54

var decimalPow10 = [maxDecimalScale + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7}

// Type returns TypePublishCompact.
func (*PublishCompact) Type() Type { return TypePublishCompact }

// AppendBody appends the Publish body with names and values through the
// frame's dictionaries.
func (m *PublishCompact) AppendBody(b []byte) []byte { return appendDictBody(b, &m.Publish, true) }

// decodePublishCompact expands the body into its Publish body and decodes
// that as Publish, as decodePublishDict does.
func (d *EventDecoder) decodePublishCompact(r *reader) *PublishCompact {
	return &PublishCompact{Publish: d.decodeExpanded(r, true)}
}

// ExpandPublishCompact appends to dst the Publish body that the
// PublishCompact body holds, checking what ExpandPublishDict checks and
// the compact values' references and decimals; the Publish decoder
// checks the rest on the result, so a PublishCompact is refused exactly
// when its expansion would be.
func ExpandPublishCompact(dst, body []byte, max int) ([]byte, error) {
	return expandDict(dst, body, max, true)
}

// DecodeOwnedPublishCompact is DecodeOwnedPublishDict for a PublishCompact
// body: it checks exactly what decoding the frame's expansion
// (ExpandPublishCompact) as a Publish would, and a string value read
// through a reference is the one its entry holds, aliasing body, with no
// second validation.
func (d *EventDecoder) DecodeOwnedPublishCompact(body []byte, max int) (*Publish, error) {
	return d.decodeOwnedDict(body, max, true)
}

// compactValue expands the value at offset o of b, which may be a
// compact one, appending its plain encoding to out and entering a string
// written out when enter is set (see dictExpander.event).
func (x *dictExpander) compactValue(out, b []byte, o int, enter bool) ([]byte, int, error) {
	if o >= len(b) {
		return nil, 0, malformed("attribute value tag: truncated")
	}
	switch {
	case b[o] == tagStrRef || b[o] >= tagShortRef:
		p, next, err := x.valueRef(b, o)
		if err != nil {
			return nil, 0, err
		}
		return append(out, p...), next, nil
	case b[o] == tagDecimal:
		f, next, err := decimalAt(b, o)
		if err != nil {
			return nil, 0, err
		}
		out = binary.LittleEndian.AppendUint64(append(out, tagFloat), math.Float64bits(f))
		return out, next, nil
	}
	k, err := valueLen(b, o)
	if err != nil {
		return nil, 0, err
	}
	if enter && b[o] == tagString && len(x.values) < MaxDictValues {
		x.values = append(x.values, b[o:o+k])
	}
	return append(out, b[o:o+k]...), o + k, nil
}

// valueRef reads the string reference at offset o of b (its tag first,
// tagStrRef or a short one) and returns the entry's plain encoding (tag,
// length, bytes) and the offset after the reference.
func (x *dictExpander) valueRef(b []byte, o int) ([]byte, int, error) {
	r, next := uint64(b[o]-tagShortRef)+1, o+1
	if b[o] == tagStrRef {
		r, next = dictUvarint(b, o+1)
	}
	switch {
	case next < 0:
		return nil, 0, malformed("string reference: bad or truncated varint")
	case r == 0 || r > uint64(len(x.values)):
		return nil, 0, malformed("string reference %d beyond the frame's %d values", r, len(x.values))
	}
	return x.values[r-1], next, nil
}

// decimalAt reads the decimal at offset o of b (its tag first).
func decimalAt(b []byte, o int) (float64, int, error) {
	v, next := dictUvarint(b, o+1)
	if next < 0 {
		return 0, 0, malformed("decimal: bad or truncated varint")
	}
	f, ok := decimalFloat(v)
	if !ok {
		return 0, 0, malformed("decimal mantissa beyond 2^53")
	}
	return f, next, nil
}

// decimalFloat returns the float a decimal's uint stands for, or false
// if its mantissa is beyond 2^53.
func decimalFloat(v uint64) (float64, bool) {
	z := v >> 3
	if z > maxDecimalZigzag {
		return 0, false
	}
	m := float64(int64(z>>1) ^ -int64(z&1))
	if s := v & 7; s != 0 {
		m /= decimalPow10[s]
	}
	return m, true
}

// decimalOf returns the decimal's uint for f when f is m / 10^s for some
// |m| <= 2^53 and s <= maxDecimalScale (exactly: decimalFloat gives f's
// bits back, so -0 is never one), trying the smallest s first. A scale
// whose f * 10^s is not within a hair of an integer is passed over
// without the exact check, whose division costs more than the rest.
func decimalOf(f float64) (uint64, bool) {
	if !(math.Abs(f) <= 1<<53) {
		return 0, false
	}
	for s, p := range decimalPow10 {
		x := f * p
		m := math.Round(x)
		switch {
		case !(math.Abs(m) <= 1<<53):
			return 0, false
		case math.Abs(x-m) > 1e-6*math.Abs(m):
			continue // f * 10^s is no integer
		}
		i := int64(m)
		v := uint64(i<<1^i>>63)<<3 | uint64(s)
		if g, _ := decimalFloat(v); math.Float64bits(g) == math.Float64bits(f) {
			return v, true
		}
	}
	return 0, false
}

// plainValueLen is the size of v's plain encoding (tag and value).
func plainValueLen(v match.Value) int {
	switch v.Kind() {
	case match.KindString:
		n := len(v.AsString())
		return 1 + uvarintLen(uint64(n)) + n
	case match.KindInt:
		i := v.AsInt()
		return 1 + uvarintLen(uint64(i<<1^i>>63))
	case match.KindFloat:
		return 9
	}
	return 2
}

// strCacheSlots is the size of dictEncoder's cache of string values.
const strCacheSlots = 512

// strSlot is a string's place in the encoder's cache: a hash of its
// length and first and last (up to) eight bytes, enough to spread the
// short values events carry.
func strSlot(s string) int {
	h := uint64(len(s))
	if len(s) >= 8 {
		h ^= load64(s) ^ load64(s[len(s)-8:])*0xff51afd7ed558ccd
	} else {
		for i := range len(s) {
			h = h<<8 | uint64(s[i])
		}
	}
	h *= 0x9e3779b97f4a7c15
	return int(h >> (64 - 9)) // strCacheSlots = 1 << 9
}

func load64(s string) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))
}

// strEntry is a string value the encoder entered, and its reference.
type strEntry struct {
	s   string
	ref uint64
	gen uint64 // stale unless the encoder's vgen
}

// strUndo is a cache slot as it was before the event being encoded
// entered a string there.
type strUndo struct {
	slot int
	old  strEntry
}

// appendStr appends string value s: a reference to the entry the cache
// holds for it when that is shorter, else the string, entered, once
// checked to be UTF-8 if check is set (false, b unchanged, if it is not:
// an entry in the cache was checked when entered). The cache does not
// find every repeat (a slot holds the last string that hashed there): a
// string it misses is written out and entered again, which the format
// allows.
func (d *dictEncoder) appendStr(b []byte, s string, check bool) ([]byte, bool) {
	if d.strs == nil {
		d.strs = new([strCacheSlots]strEntry)
	}
	i := strSlot(s)
	slot := &d.strs[i]
	if slot.ref != 0 && slot.gen == d.vgen && len(slot.s) == len(s) && (unsafe.StringData(slot.s) == unsafe.StringData(s) || slot.s == s) {
		switch ref := slot.ref; {
		case ref <= 256-uint64(tagShortRef):
			return append(b, tagShortRef+byte(ref-1)), true
		case uvarintLen(ref) < uvarintLen(uint64(len(s)))+len(s):
			return binary.AppendUvarint(append(b, tagStrRef), ref), true
		}
	}
	if check && !validUTF8String(s) {
		return b, false
	}
	b = appendString(append(b, tagString), s)
	if d.values < MaxDictValues {
		d.strUndo = append(d.strUndo, strUndo{slot: i, old: *slot})
		d.values++
		*slot = strEntry{s: s, ref: uint64(d.values), gen: d.vgen}
	}
	return b, true
}

// appendCompactValue appends v as a PublishCompact value, or returns
// false (and b unchanged) for a string that is not UTF-8 if check is set.
func (d *dictEncoder) appendCompactValue(b []byte, v match.Value, check bool) ([]byte, bool) {
	switch v.Kind() {
	case match.KindString:
		return d.appendStr(b, v.AsString(), check)
	case match.KindFloat:
		if x, ok := decimalOf(v.AsFloat()); ok && uvarintLen(x) < 8 {
			return binary.AppendUvarint(append(b, tagDecimal), x), true
		}
	}
	return appendValue(b, v), true
}

// appendCompactEvent is appendEvent of a PublishCompact event: a
// reference to the last layout and the values when e has its names,
// else 0 and the PublishDict event, whose names become the last layout.
// Only the last layout is looked for: a stream whose events alternate
// between layouts enters one per event (until MaxDictLayouts, then
// writes them out), which costs what a PublishDict event does and a
// byte.
func (d *dictEncoder) appendCompactEvent(b []byte, e match.Event, check bool) ([]byte, int, error) {
	// The previous event's undo slots stay until this one is taken in:
	// a refused event puts back only its own (truncate from undoFrom),
	// so an Undo after it still takes back the event before it whole.
	d.undoFrom = len(d.strUndo)
	b, plain, err := d.encodeCompactEvent(b, e, check)
	if err == nil {
		d.strUndo = append(d.strUndo[:0], d.strUndo[d.undoFrom:]...)
	}
	d.undoFrom = 0
	return b, plain, err
}

// encodeCompactEvent is appendCompactEvent's encoding, its undo slots
// entered after undoFrom.
func (d *dictEncoder) encodeCompactEvent(b []byte, e match.Event, check bool) ([]byte, int, error) {
	start := len(b)
	if d.last.ref == 0 || !d.sameLayout(e) {
		b, plain, err := d.appendNamedEvent(append(b, 0), e, check)
		if err != nil {
			return b[:start], 0, err
		}
		if d.layouts < MaxDictLayouts {
			spare := d.prev.names
			d.prev = d.last // for Undo (truncate)
			d.layouts++
			d.last = encLayout{ref: uint64(d.layouts), names: spare[:0]}
			for i := range e.Len() {
				d.last.names = append(d.last.names, e.At(i).Name)
			}
			d.last.plain = newLayout(d.last.names).plain
		}
		return b, plain, nil
	}
	values := d.values
	b = binary.AppendUvarint(b, d.last.ref)
	plain := d.last.plain
	for i := range e.Len() {
		v := e.At(i).Value
		var ok bool
		if b, ok = d.appendCompactValue(b, v, check); !ok {
			d.truncate(len(d.order), values, d.layouts)
			return b[:start], 0, invalidUTF8Attr(e.At(i).Name)
		}
		plain += plainValueLen(v)
	}
	return b, plain, nil
}

// sameLayout reports whether e's names are the last layout's. A
// stream's events mostly carry the same name strings (the same pointers),
// which it compares without a call.
func (d *dictEncoder) sameLayout(e match.Event) bool {
	if e.Len() != len(d.last.names) {
		return false
	}
	for i, name := range d.last.names {
		if s := e.At(i).Name; len(s) != len(name) || unsafe.StringData(s) != unsafe.StringData(name) && s != name {
			return false
		}
	}
	return true
}

// encLayout is a layout the encoder entered: its reference (0: none), its
// names and the size of their plain encoding with the count.
type encLayout struct {
	ref   uint64
	names []string
	plain int
}
