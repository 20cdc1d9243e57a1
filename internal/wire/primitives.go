package wire

import (
	"encoding/binary"
	"unicode/utf8"
)

// appendString appends a varint length and the bytes of s.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendBytes appends a varint length and p.
func appendBytes(b []byte, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// reader consumes a message body. The first error sticks: later reads
// return zero values, and err reports it, so decoders check once at the end
// of a group of reads. fail also empties b, so a read that finds bytes
// left knows that no error is pending.
type reader struct {
	b   []byte
	err error
	// shared, when set, is the whole body as one string: decoded strings
	// are substrings of it instead of separate allocations. r.b is always
	// a suffix of the body, so offsets into shared follow from len(r.b).
	shared string
	// borrow makes events decode into the decoder's borrowed memory
	// (DecodeBorrowedDeliver); it is the reader's, not the decoder's, so
	// a decoder used again while a borrowed event is handed over (from
	// the callback) decodes as its caller asks.
	borrow bool
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = malformed(format, args...)
	}
	r.b = nil
}

func (r *reader) uvarint(what string) uint64 {
	if len(r.b) > 0 && r.b[0] < 0x80 { // one byte: most counts, lengths and ids
		v := r.b[0]
		r.b = r.b[1:]
		return uint64(v)
	}
	return r.uvarintSlow(what, "")
}

// length reads the varint length prefix of what; a failure says
// "<what> length: ...", a string built only then (this is the per-field
// hot path).
func (r *reader) length(what string) uint64 {
	if len(r.b) > 0 && r.b[0] < 0x80 {
		v := r.b[0]
		r.b = r.b[1:]
		return uint64(v)
	}
	return r.uvarintSlow(what, " length")
}

// uvarintSlow reads a varint of more than one byte (or fails) for uvarint
// and length; a failure names what, then suffix.
func (r *reader) uvarintSlow(what, suffix string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("%s%s: truncated or overlong varint", what, suffix)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("%s: truncated or overlong varint", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte(what string) byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail("%s: truncated", what)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) fixed64(what string) uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.fail("%s: truncated", what)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// fixed64s fills words with consecutive 8-byte little-endian words, or
// fails as fixed64 does when fewer bytes are left (reading none then).
func (r *reader) fixed64s(what string, words []uint64) {
	if r.err != nil {
		return
	}
	if len(r.b) < 8*len(words) {
		r.fail("%s: truncated", what)
		return
	}
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(r.b[8*i:])
	}
	r.b = r.b[8*len(words):]
}

// bytes returns a length-prefixed byte string aliasing the body.
func (r *reader) bytes(what string) []byte {
	n := r.length(what)
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail("%s: length %d exceeds the %d bytes left", what, n, len(r.b))
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// utf8String returns a length-prefixed string that must be valid UTF-8.
func (r *reader) utf8String(what string) string {
	p := r.bytes(what)
	if r.err != nil {
		return ""
	}
	if !utf8.Valid(p) {
		r.fail("%s: invalid UTF-8", what)
		return ""
	}
	if r.shared != "" {
		end := len(r.shared) - len(r.b)
		return r.shared[end-len(p) : end]
	}
	return string(p)
}

// count reads a varint element count and checks that at least min bytes per
// element remain, so a forged count cannot make a decoder allocate more than
// the body could hold.
func (r *reader) count(what string, min int) int {
	n := r.uvarint(what)
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.b)/min) {
		r.fail("%s %d exceeds what the %d bytes left could hold", what, n, len(r.b))
		return 0
	}
	return int(n)
}

// end fails unless the body is fully consumed.
func (r *reader) end(what string) error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("%s: %d trailing bytes", what, len(r.b))
	}
	return r.err
}
