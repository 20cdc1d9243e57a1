package wire

import "encoding/binary"

// skipAttr validates attribute i, at offset o of b, without building it,
// returning the offset after it: the fast path for an attribute the
// decoder drops (Wanted), whose name is the one the previous event had at
// the same position and is known not wanted. A router's filters name few
// of an event's attributes (a topic router one of nine), so most
// attributes take this path: no interned-name lookup, no value, no store
// into the attribute list.
//
// It accepts exactly what fastAttr and the reader accept for such an
// attribute and checks the same things (the name's bytes against the
// validated name cached for position i, the tag, the value's length,
// varint, float finiteness, bool byte and UTF-8), or gives up (false) and
// changes nothing: the caller then decodes the attribute the usual way,
// which accepts or refuses it, and words the error.
func (d *EventDecoder) skipAttr(b []byte, o, i int) (int, bool) {
	if i >= len(d.pos) || d.pos[i].want != wantNo {
		return 0, false
	}
	var p []byte
	if n := shortLen(b, o); n >= 0 {
		p, o = b[o+1:o+1+n], o+1+n
	} else if p, o = fastBytes(b, o); o < 0 {
		return 0, false
	}
	if o >= len(b) || d.pos[i].name != string(p) {
		return 0, false
	}
	switch b[o] {
	case tagString:
		if n := shortLen(b, o+1); n >= 0 {
			p, o = b[o+2:o+2+n], o+2+n
		} else if p, o = fastBytes(b, o+1); o < 0 {
			return 0, false
		}
		if !validUTF8(p) {
			return 0, false
		}
	case tagInt:
		_, n := binary.Uvarint(b[o+1:]) // binary.Varint's length and its refusals
		if n <= 0 {
			return 0, false
		}
		o += 1 + n
	case tagFloat:
		if len(b)-o < 9 {
			return 0, false
		}
		// An exponent of all ones is an infinity or a NaN.
		if bits := binary.LittleEndian.Uint64(b[o+1:]); bits>>52&0x7ff == 0x7ff {
			return 0, false
		}
		o += 9
	case tagBool:
		if len(b)-o < 2 || b[o+1] > 1 {
			return 0, false
		}
		o += 2
	default:
		return 0, false
	}
	return o, true
}
