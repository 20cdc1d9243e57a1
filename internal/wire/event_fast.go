package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/sift-pubsub/sift/match"
)

// fastAttr decodes attribute i from b into dst without the reader: pure
// functions of the remaining bytes, returning the rest. The reader's
// methods update r.b through a pointer, a store that costs a write barrier
// while the garbage collector marks (which, at a router's allocation
// rate, is much of the time); here the position lives in the caller's
// local variable. It accepts exactly what the reader accepts, or gives up
// (false) and leaves the attribute to the reader, which also words the
// error: a malformed attribute is always decoded, and refused, by the
// reader. r is only read (what kind of memory the event decodes into).
func (d *EventDecoder) fastAttr(b []byte, i int, r *reader, dst *match.Attr) ([]byte, bool) {
	var p []byte
	if n := shortLen(b); n >= 0 {
		p, b = b[1:1+n], b[1+n:]
	} else if p, b = fastBytes(b); b == nil {
		return nil, false
	}
	name, ok := d.intern(p, i)
	if !ok || len(b) == 0 {
		return nil, false
	}
	var v match.Value
	switch tag := b[0]; tag {
	case tagString:
		if n := shortLen(b[1:]); n >= 0 {
			p, b = b[2:2+n], b[2+n:]
		} else if p, b = fastBytes(b[1:]); b == nil {
			return nil, false
		}
		if !validUTF8(p) {
			return nil, false
		}
		v = match.Str(d.str(r, p, b, i))
	case tagInt:
		x, n := binary.Varint(b[1:])
		if n <= 0 {
			return nil, false
		}
		v, b = match.Int(x), b[1+n:]
	case tagFloat:
		if len(b) < 9 {
			return nil, false
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(b[1:]))
		if v, ok = finite(f); !ok {
			return nil, false
		}
		b = b[9:]
	case tagBool:
		if len(b) < 2 || b[1] > 1 {
			return nil, false
		}
		v, b = match.Bool(b[1] == 1), b[2:]
	default:
		return nil, false
	}
	setAttr(dst, name, v)
	return b, true
}

// shortLen returns the length of the byte string at the front of b when
// its length prefix is one byte (most names' and values') and b holds its
// bytes, else -1 (see fastBytes).
func shortLen(b []byte) int {
	if len(b) > 0 && int(b[0]) < min(len(b), 0x80) {
		return int(b[0])
	}
	return -1
}

// fastBytes splits a length-prefixed byte string off b; rest is nil if
// b does not hold one. fastAttr calls it when shortLen cannot say.
func fastBytes(b []byte) (p, rest []byte) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil
	}
	end := k + int(n)
	return b[k:end], b[end:]
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
