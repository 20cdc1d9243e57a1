package wire

import (
	"encoding/binary"
	"math"
)

// MaxBatchFilters bounds the filters of one SubscribeBatch, so that one
// frame stays one bounded unit of work for the router's matching loop
// (the frame size bounds it too).
const MaxBatchFilters = 1 << 16

// SubscribeBatch asks the router to install many filters at once, under
// the consecutive subscription ids First, First+1, ... (one per filter, in
// order; unique per connection like Subscribe's). The router answers with
// one Ack (About TypeSubscribeBatch, ID First) once every filter is
// installed on every router it must reach, or with one Error (About
// TypeSubscribeBatch, Ref First, the message naming the first bad
// filter's position) having installed none of them.
type SubscribeBatch struct {
	First   uint64
	Filters []string
}

// Type returns TypeSubscribeBatch.
func (*SubscribeBatch) Type() Type { return TypeSubscribeBatch }

// AppendBody appends the first id, the filter count and each filter text.
func (m *SubscribeBatch) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.First)
	b = binary.AppendUvarint(b, uint64(len(m.Filters)))
	for _, f := range m.Filters {
		b = appendString(b, f)
	}
	return b
}

func decodeSubscribeBatch(r *reader) *SubscribeBatch {
	m := &SubscribeBatch{First: r.uvarint("subscribe-batch first id")}
	n := r.count("subscribe-batch filter count", 1) // a filter is at least its length byte
	switch {
	case r.err != nil:
		return m
	case n == 0:
		r.fail("subscribe-batch: no filters")
		return m
	case n > MaxBatchFilters:
		r.fail("subscribe-batch: %d filters exceed %d", n, MaxBatchFilters)
		return m
	case m.First > math.MaxUint64-uint64(n-1):
		r.fail("subscribe-batch: ids from %d for %d filters overflow", m.First, n)
		return m
	}
	m.Filters = make([]string, 0, n)
	for range n {
		f := r.utf8String("subscribe-batch filter")
		if r.err != nil {
			return m
		}
		if len(f) > MaxFilterLen {
			r.fail("subscribe-batch: filter %d of %d bytes exceeds %d", len(m.Filters), len(f), MaxFilterLen)
			return m
		}
		m.Filters = append(m.Filters, f)
	}
	return m
}
