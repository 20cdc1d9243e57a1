package wire

import (
	"encoding/binary"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
)

// compactValue decodes the value at offset o of b, attribute name of a
// PublishCompact event, when it is a string (entered into x's values), a
// string reference or a decimal (dictEvent leaves the other values to the
// Publish machinery): into dst if keep, else validated only. It returns
// the offset after it and the size of its plain encoding; a malformed
// value fails r, with the message the expansion would give, prefixed by
// the attribute.
//
// A string read through a reference was checked when its entry was read
// (an entry is a string value of the same frame, so the frame is refused
// if it is not UTF-8), and aliases the body where the entry was written
// out: a repeated value costs neither a second validation nor a copy.
func (d *EventDecoder) compactValue(r *reader, x *dictExpander, b []byte, o int, name string, keep bool, dst *match.Attr) (int, int) {
	var v match.Value
	var next, size int
	switch t := b[o]; {
	case t == tagString:
		p, end := fastBytes(b, o+1)
		if end < 0 {
			compactFail(r, name, malformed("string: bad or truncated length"))
			return 0, 0
		}
		if !validUTF8(p) {
			compactFail(r, name, malformed("invalid UTF-8"))
			return 0, 0
		}
		if len(x.values) < MaxDictValues {
			x.values = append(x.values, b[o:end])
		}
		next, size = end, end-o
		if keep {
			v = match.Str(d.str(r, p, len(b)-end, 0))
		}
	case t == tagStrRef || t >= tagShortRef:
		e, end, err := x.valueRef(b, o)
		if err != nil {
			compactFail(r, name, err)
			return 0, 0
		}
		next, size = end, len(e)
		if keep {
			v = match.Str(entryString(e))
		}
	case t == tagDecimal:
		u, end := dictUvarint(b, o+1)
		if end < 0 || u>>3 > maxDecimalZigzag {
			_, _, err := decimalAt(b, o) // words it
			compactFail(r, name, err)
			return 0, 0
		}
		next, size = end, 9
		if keep {
			f, _ := decimalFloat(u)
			v, _ = finite(f) // a decimal is always finite
		}
	default:
		compactFail(r, name, malformed("unknown value tag %d", b[o]))
		return 0, 0
	}
	if keep {
		setAttr(dst, name, v)
	}
	return next, size
}

// compactFail fails r with err, naming the attribute.
func compactFail(r *reader, name string, err error) {
	if pe, ok := err.(*ProtocolError); ok {
		pe.Msg = "attribute " + name + ": " + pe.Msg
	}
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

// entryString is the string of a values entry (tag, length, bytes) as a
// string aliasing the entry: the entry was read, and its length checked,
// when it was entered.
func entryString(e []byte) string {
	if e[1] < 0x80 { // a one-byte length, most strings'
		if len(e) == 2 {
			return ""
		}
		return unsafe.String(&e[2], len(e)-2)
	}
	_, k := binary.Uvarint(e[1:])
	n := len(e) - 1 - k
	if n == 0 {
		return ""
	}
	return unsafe.String(&e[1+k], n)
}

// layoutEvent reads the values of a PublishCompact event of layout l (its
// reference read). The layout's names were checked, and are interned,
// when the event that entered it was read, and which of them are kept is
// known by layout (keepFor), so a name costs nothing; the decoder's
// positions are not changed (they stay the last PublishDict event's, for
// PublishDict's shortcut). A dropped value that is a short string
// reference, a decimal, an int or a bool is checked in place; anything
// else goes through dictValue, which also words errors.
func (d *EventDecoder) layoutEvent(r *reader, x *dictExpander, l uint64) (match.Event, int) {
	if l > uint64(len(x.layouts)) {
		r.fail("layout reference %d beyond the frame's %d layouts", l, len(x.layouts))
		return match.Event{}, 0
	}
	lay := &x.layouts[l-1]
	keep := lay.keepFor(d.Wanted)
	attrs := d.attrList(r, lay.kept+1) // and a slot a dropped value may be decoded into
	d.strs, d.buf = d.strs[:0], d.buf[:0]
	b, o := r.b, 0
	plain := lay.plain
	kept := 0
	for i, name := range lay.names {
		if !keep[i] && o < len(b) {
			switch t := b[o]; {
			case t >= tagShortRef:
				if k := int(t - tagShortRef); k < len(x.values) {
					o, plain = o+1, plain+len(x.values[k])
					continue
				}
			case t == tagDecimal:
				if u, next := dictUvarint(b, o+1); next > 0 && u>>3 <= maxDecimalZigzag {
					o, plain = next, plain+9
					continue
				}
			case t == tagInt || t == tagBool:
				if next, ok := skipValue(b, o); ok {
					o, plain = next, plain+next-o
					continue
				}
			}
		}
		next, size := d.dictValue(r, x, b, o, i, name, keep[i], &attrs[kept], kept)
		if r.err != nil {
			return match.Event{}, 0
		}
		o, plain = next, plain+size
		if keep[i] {
			kept++
		}
	}
	r.b = b[o:]
	attrs = d.keepAttrs(r, attrs, kept)
	d.setStrings(attrs)
	return match.NewTrustedEvent(attrs), plain
}
