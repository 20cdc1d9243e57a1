// Package recbuf writes and reads the primitive fields of Sift's binary
// records (the durable log's records and the replicated pubend's
// proposals, snapshots and messages): varints, fixed 64-bit words and
// length-prefixed strings.
//
// A Decoder's first error sticks and every later read returns a zero
// value, so a record decoder reads all its fields and checks one error at
// the end (Done). Lengths are checked against the bytes left before
// anything is allocated, so a corrupt length cannot make a reader allocate
// without bound.
package recbuf

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Encoder appends fields to B.
type Encoder struct{ B []byte }

// Byte appends one byte.
func (e *Encoder) Byte(v byte) { e.B = append(e.B, v) }

// Uvarint appends v as an unsigned varint.
func (e *Encoder) Uvarint(v uint64) { e.B = binary.AppendUvarint(e.B, v) }

// Varint appends v as a zig-zag varint.
func (e *Encoder) Varint(v int64) { e.B = binary.AppendVarint(e.B, v) }

// U64 appends v as 8 big-endian bytes.
func (e *Encoder) U64(v uint64) { e.B = binary.BigEndian.AppendUint64(e.B, v) }

// Str appends s with its length as a prefix.
func (e *Encoder) Str(s string) {
	e.Uvarint(uint64(len(s)))
	e.B = append(e.B, s...)
}

// Bytes appends v with its length as a prefix.
func (e *Encoder) Bytes(v []byte) {
	e.Uvarint(uint64(len(v)))
	e.B = append(e.B, v...)
}

// ErrShort reports a record that ends early.
var ErrShort = errors.New("record ends early")

// Decoder reads what an Encoder wrote from B; Err is the first error.
type Decoder struct {
	B   []byte
	Err error
}

// Fail records err unless an error is already recorded.
func (d *Decoder) Fail(err error) {
	if d.Err == nil {
		d.Err = err
	}
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if d.Err != nil || len(d.B) < 1 {
		d.Fail(ErrShort)
		return 0
	}
	v := d.B[0]
	d.B = d.B[1:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Fail(ErrShort)
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Varint reads a zig-zag varint.
func (d *Decoder) Varint() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.Fail(ErrShort)
		return 0
	}
	d.B = d.B[n:]
	return v
}

// U64 reads 8 big-endian bytes.
func (d *Decoder) U64() uint64 {
	if d.Err != nil || len(d.B) < 8 {
		d.Fail(ErrShort)
		return 0
	}
	v := binary.BigEndian.Uint64(d.B)
	d.B = d.B[8:]
	return v
}

// Count reads a length and checks that at least minItem bytes per item
// remain.
func (d *Decoder) Count(minItem int) int {
	n := d.Uvarint()
	if d.Err == nil && n > uint64(len(d.B)/max(minItem, 1)) {
		d.Fail(fmt.Errorf("count %d exceeds the %d bytes left", n, len(d.B)))
		return 0
	}
	return int(n)
}

// Bytes reads a length-prefixed byte string into a new slice.
func (d *Decoder) Bytes() []byte {
	n := d.Count(1)
	if d.Err != nil {
		return nil
	}
	v := append([]byte(nil), d.B[:n]...)
	d.B = d.B[n:]
	return v
}

// View reads a length-prefixed byte string as a slice of B itself, without
// copying: for decoders whose input outlives what they decode and is never
// written again (a raft entry's data). An empty string reads as nil, as
// with Bytes.
func (d *Decoder) View() []byte {
	n := d.Count(1)
	if d.Err != nil || n == 0 {
		return nil
	}
	v := d.B[:n:n]
	d.B = d.B[n:]
	return v
}

// Str reads a length-prefixed string.
func (d *Decoder) Str() string {
	n := d.Count(1)
	if d.Err != nil {
		return ""
	}
	s := string(d.B[:n])
	d.B = d.B[n:]
	return s
}

// Done returns the first error, or an error if bytes are left over.
func (d *Decoder) Done() error {
	if d.Err == nil && len(d.B) > 0 {
		d.Fail(fmt.Errorf("%d unexpected trailing bytes", len(d.B)))
	}
	return d.Err
}
