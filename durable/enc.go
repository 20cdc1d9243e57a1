package durable

import (
	"math"

	"github.com/sift-pubsub/sift/internal/recbuf"
)

// encoder appends the fields of Sift's durable records.
type encoder struct{ recbuf.Encoder }

func (e *encoder) tick(t Tick) { e.Varint(int64(t)) }

// decoder reads what encoder wrote; the first error sticks and every later
// read returns zero values.
type decoder struct{ recbuf.Decoder }

func newDecoder(b []byte) decoder { return decoder{recbuf.Decoder{B: b}} }

func (d *decoder) tick() Tick { return Tick(d.Varint()) }

func f64bits(f float64) uint64 { return math.Float64bits(f) }
