package bloom

import (
	"encoding/binary"
	"math"

	"github.com/sift-pubsub/sift/match"
)

// appendValueKey appends a key of v such that two values get the same key
// exactly when `==` holds between them: strings by bytes, bools by value,
// and numbers by mathematical value (an integral float64 in the int64
// range keys as that int64, so 5 and 5.0 meet, and -0.0 keys as 0).
func appendValueKey(b []byte, v match.Value) []byte {
	switch v.Kind() {
	case match.KindString:
		b = append(b, 's')
		b = binary.AppendUvarint(b, uint64(len(v.AsString())))
		return append(b, v.AsString()...)
	case match.KindBool:
		if v.AsBool() {
			return append(b, 'T')
		}
		return append(b, 'F')
	case match.KindInt:
		return binary.BigEndian.AppendUint64(append(b, 'i'), uint64(v.AsInt()))
	}
	f := v.AsFloat()
	const two63 = 9223372036854775808.0
	if f == math.Trunc(f) && f >= -two63 && f < two63 {
		return binary.BigEndian.AppendUint64(append(b, 'i'), uint64(int64(f)))
	}
	return binary.BigEndian.AppendUint64(append(b, 'f'), math.Float64bits(f))
}

// qualTuple is the key of a qualifier's equality values, in its
// constraint order.
func qualTuple(q match.Filter) string {
	var b []byte
	for i := range q.Len() {
		b = appendValueKey(b, q.At(i).Val)
	}
	return string(b)
}

// eventTuple appends the key of the event's values for the attributes of
// a signature (ids: one per qualifier constraint, repeats included), and
// reports false when the event lacks one of them.
func eventTuple(b []byte, e *eventView, ids []int32) ([]byte, bool) {
	for _, id := range ids {
		v, ok := e.get(id)
		if !ok {
			return b, false
		}
		b = appendValueKey(b, v)
	}
	return b, true
}
