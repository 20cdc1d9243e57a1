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
// reader. shared is the reader's shared body ("" when strings are
// copied).
func (d *EventDecoder) fastAttr(b []byte, i int, shared string, dst *match.Attr) ([]byte, bool) {
	p, b, ok := fastBytes(b)
	if !ok {
		return nil, false
	}
	name, ok := d.intern(p, i)
	if !ok || len(b) == 0 {
		return nil, false
	}
	var v match.Value
	switch tag := b[0]; tag {
	case tagString:
		if p, b, ok = fastBytes(b[1:]); !ok || !utf8.Valid(p) {
			return nil, false
		}
		v = match.Str(d.str(p, b, shared, i))
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

// fastBytes splits a length-prefixed byte string off b.
func fastBytes(b []byte) (p, rest []byte, ok bool) {
	if len(b) > 0 && b[0] < 0x80 && int(b[0]) < len(b) { // a one-byte length: most names and values
		end := 1 + int(b[0])
		return b[1:end:end], b[end:], true
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	end := k + int(n)
	return b[k:end:end], b[end:], true
}

// finite is match.Float for finite floats; false for NaN and infinities.
func finite(f float64) (match.Value, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return match.Value{}, false
	}
	v, err := match.Float(f)
	return v, err == nil
}
