package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/sift-pubsub/sift/match"
)

// fastAttr decodes attribute i, at offset o of b, into dst without the
// reader, returning the offset after it: the position is an index into
// the event's bytes, not a slice re-cut per field, and lives in the
// caller's local variable (the reader's methods update r.b through a
// pointer, a store that costs a write barrier while the garbage collector
// marks). It accepts exactly what the reader accepts, or gives up (false)
// and leaves the attribute to the reader, which also words the error: a
// malformed attribute is always decoded, and refused, by the reader. r is
// only read (what kind of memory the event decodes into).
func (d *EventDecoder) fastAttr(b []byte, o, i int, r *reader, dst *match.Attr) (int, bool) {
	var p []byte
	if n := shortLen(b, o); n >= 0 {
		p, o = b[o+1:o+1+n], o+1+n
	} else if p, o = fastBytes(b, o); o < 0 {
		return 0, false
	}
	name, ok := d.intern(p, i)
	if !ok {
		return 0, false
	}
	return d.fastValue(b, o, i, r, dst, name)
}

// fastValue decodes the tagged value at offset o of b as attribute i
// named name into dst: fastAttr's value part (and PublishDict's, whose
// names are references).
func (d *EventDecoder) fastValue(b []byte, o, i int, r *reader, dst *match.Attr, name string) (int, bool) {
	if o >= len(b) {
		return 0, false
	}
	var p []byte
	var v match.Value
	var ok bool
	switch tag := b[o]; tag {
	case tagString:
		if n := shortLen(b, o+1); n >= 0 {
			p, o = b[o+2:o+2+n], o+2+n
		} else if p, o = fastBytes(b, o+1); o < 0 {
			return 0, false
		}
		if !validUTF8(p) {
			return 0, false
		}
		v = match.Str(d.str(r, p, len(b)-o, i))
	case tagInt:
		x, n := binary.Varint(b[o+1:])
		if n <= 0 {
			return 0, false
		}
		v, o = match.Int(x), o+1+n
	case tagFloat:
		if len(b)-o < 9 {
			return 0, false
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(b[o+1:]))
		if v, ok = finite(f); !ok {
			return 0, false
		}
		o += 9
	case tagBool:
		if len(b)-o < 2 || b[o+1] > 1 {
			return 0, false
		}
		v, o = match.Bool(b[o+1] == 1), o+2
	default:
		return 0, false
	}
	setAttr(dst, name, v)
	return o, true
}

// shortLen returns the length of the byte string at offset o of b when
// its length prefix is one byte (most names' and values') and b holds its
// bytes, else -1: fastAttr then calls fastBytes.
func shortLen(b []byte, o int) int {
	if o < len(b) && b[o] < 0x80 && int(b[o]) < len(b)-o {
		return int(b[o])
	}
	return -1
}

// fastBytes returns the length-prefixed byte string at offset o of b and
// the offset after it, or a negative offset if b does not hold one there.
func fastBytes(b []byte, o int) ([]byte, int) {
	if o >= len(b) {
		return nil, -1
	}
	n, k := binary.Uvarint(b[o:])
	if k <= 0 || n > uint64(len(b)-o-k) {
		return nil, -1
	}
	start := o + k
	return b[start : start+int(n)], start + int(n)
}

// validUTF8 is utf8.Valid with a fast path for ASCII, which most values
// are.
func validUTF8(p []byte) bool { return isASCII(p) || utf8.Valid(p) }

// isASCII reports whether p is all ASCII, eight bytes at a time (the
// byte loads of a word combine into one), then the tail byte by byte.
func isASCII[T string | []byte](p T) bool {
	for len(p) >= 8 {
		w := uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
			uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
		p = p[8:]
	}
	var or byte
	for i := range len(p) {
		or |= p[i]
	}
	return or < utf8.RuneSelf
}

// finite is match.Float for finite floats; false for NaN and infinities.
func finite(f float64) (match.Value, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return match.Value{}, false
	}
	v, err := match.Float(f)
	return v, err == nil
}
