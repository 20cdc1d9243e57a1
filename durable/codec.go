package durable

import (
	"fmt"
	"math"

	"github.com/sift-pubsub/sift/internal/recbuf"
	"github.com/sift-pubsub/sift/match"
)

// eventCodecV1 is the version byte of the event encoding.
const eventCodecV1 = 1

// Value kinds on disk (independent of match.Kind's numbering).
const (
	wireString = 1
	wireInt    = 2
	wireFloat  = 3
	wireBool   = 4
)

// AppendEvent appends the compact, versioned binary encoding of e: a
// version byte, the attribute count, then per attribute its name, a kind
// byte and the value (length-prefixed string, zigzag varint, IEEE 754 bits
// big-endian, or one byte).
func AppendEvent(b []byte, e match.Event) []byte {
	enc := encoder{recbuf.Encoder{B: b}}
	enc.Byte(eventCodecV1)
	enc.appendEventBody(e)
	return enc.B
}

func (enc *encoder) appendEventBody(e match.Event) {
	enc.Uvarint(uint64(e.Len()))
	for i := range e.Len() {
		a := e.At(i)
		enc.Str(a.Name)
		switch v := a.Value; v.Kind() {
		case match.KindString:
			enc.Byte(wireString)
			enc.Str(v.AsString())
		case match.KindInt:
			enc.Byte(wireInt)
			enc.Varint(v.AsInt())
		case match.KindFloat:
			enc.Byte(wireFloat)
			enc.U64(f64bits(v.AsFloat()))
		case match.KindBool:
			enc.Byte(wireBool)
			if v.AsBool() {
				enc.Byte(1)
			} else {
				enc.Byte(0)
			}
		}
	}
}

// DecodeEvent decodes what AppendEvent wrote. Corrupt or truncated input,
// an unknown version or kind, invalid names, names out of order (so every
// event has one encoding) and non-finite floats are errors.
func DecodeEvent(b []byte) (match.Event, error) {
	d := newDecoder(b)
	e, err := d.event()
	if err == nil {
		err = d.Done()
	}
	if err != nil {
		return match.Event{}, fmt.Errorf("decode event: %w", err)
	}
	return e, nil
}

func (d *decoder) event() (match.Event, error) {
	if v := d.Byte(); d.Err == nil && v != eventCodecV1 {
		return match.Event{}, fmt.Errorf("unknown event encoding version %d", v)
	}
	return d.eventBody()
}

func (d *decoder) eventBody() (match.Event, error) {
	n := d.Count(3)
	attrs := make([]match.Attr, 0, n)
	for range n {
		name := d.Str()
		if len(attrs) > 0 && name <= attrs[len(attrs)-1].Name {
			return match.Event{}, fmt.Errorf("attribute %q out of order", name)
		}
		v, err := d.value()
		if err != nil {
			return match.Event{}, fmt.Errorf("attribute %q: %w", name, err)
		}
		attrs = append(attrs, match.Attr{Name: name, Value: v})
	}
	if d.Err != nil {
		return match.Event{}, d.Err
	}
	return match.NewEvent(attrs...)
}

func (d *decoder) value() (match.Value, error) {
	switch k := d.Byte(); k {
	case wireString:
		return match.Str(d.Str()), d.Err
	case wireInt:
		return match.Int(d.Varint()), d.Err
	case wireFloat:
		f := math.Float64frombits(d.U64())
		if d.Err != nil {
			return match.Value{}, d.Err
		}
		return match.Float(f)
	case wireBool:
		switch d.Byte() {
		case 0:
			return match.Bool(false), d.Err
		case 1:
			return match.Bool(true), d.Err
		}
		return match.Value{}, fmt.Errorf("bad bool byte")
	default:
		if d.Err != nil {
			return match.Value{}, d.Err
		}
		return match.Value{}, fmt.Errorf("unknown value kind %d", k)
	}
}
