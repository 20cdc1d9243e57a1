package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// encoder appends the primitive fields of Sift's durable records.
type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) byte1(v byte)     { e.b = append(e.b, v) }
func (e *encoder) tick(t Tick)      { e.varint(int64(t)) }
func (e *encoder) u64(v uint64)     { e.b = binary.BigEndian.AppendUint64(e.b, v) }

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// errShort reports a record that ends early.
var errShort = errors.New("record ends early")

// decoder reads what encoder wrote; the first error sticks and every later
// read returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) tick() Tick { return Tick(d.varint()) }

func (d *decoder) byte1() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) u64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.fail(errShort)
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// count reads a length and checks that at least min bytes per item remain,
// so a corrupt length cannot make the caller allocate without bound.
func (d *decoder) count(minItem int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/max(minItem, 1)) {
		d.fail(fmt.Errorf("count %d exceeds the %d bytes left", n, len(d.b)))
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.count(1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// done reports the sticky error, or an error if bytes are left over.
func (d *decoder) done() error {
	if d.err == nil && len(d.b) > 0 {
		return fmt.Errorf("%d unexpected trailing bytes", len(d.b))
	}
	return d.err
}

func f64bits(f float64) uint64 { return math.Float64bits(f) }
