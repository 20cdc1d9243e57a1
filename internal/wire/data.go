package wire

import (
	"encoding/binary"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
)

// MaxSubsPerItem bounds the subscription ids of one Deliver item.
const MaxSubsPerItem = 1 << 16

// Publish carries a batch of events from a publisher, numbered by a
// sequence number that the router acknowledges once it has accepted the
// whole batch.
type Publish struct {
	Seq    uint64
	Events []match.Event
	// Raw[i] is the encoding of Events[i] as received (aliasing the frame
	// body), so that routers forward events without encoding them again.
	// AppendBody ignores it.
	Raw [][]byte
}

// Type returns TypePublish.
func (*Publish) Type() Type { return TypePublish }

// AppendBody appends seq, the event count and the encoded events.
func (m *Publish) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Seq)
	b = binary.AppendUvarint(b, uint64(len(m.Events)))
	for _, e := range m.Events {
		b = AppendEvent(b, e)
	}
	return b
}

func (d *EventDecoder) decodePublish(r *reader) *Publish {
	m := &Publish{Seq: r.uvarint("publish seq")}
	n := r.count("publish event count", 1)
	if r.err != nil {
		return m
	}
	m.Events = make([]match.Event, 0, n)
	m.Raw = make([][]byte, 0, n)
	for range n {
		start := r.b
		e := d.event(r)
		if r.err != nil {
			return m
		}
		m.Events = append(m.Events, e)
		m.Raw = append(m.Raw, start[:len(start)-len(r.b):len(start)-len(r.b)])
	}
	return m
}

// DecodeOwnedPublish decodes the body of a Publish frame that the caller
// hands over, for a router, which keeps events only while it routes them.
// It is Decode(TypePublish, body) with ShareStrings, without copying the
// body first: the events' strings, their attribute lists' slabs and Raw
// alias body, so the caller must never modify body afterwards (a
// FrameReader's ReadFrame returns a fresh body per frame), and any event
// kept keeps the whole body alive.
func (d *EventDecoder) DecodeOwnedPublish(body []byte) (*Publish, error) {
	r := reader{b: body}
	if len(body) > 0 {
		r.shared = unsafe.String(unsafe.SliceData(body), len(body))
	}
	m := d.decodePublish(&r)
	if err := r.end(TypePublish.String()); err != nil {
		return nil, err
	}
	return m, nil
}

// PublishBatch accumulates encoded events for one Publish frame, so a
// publisher encodes each event once, straight into the batch.
type PublishBatch struct {
	buf []byte
	n   int
}

// Add encodes e into the batch.
func (p *PublishBatch) Add(e match.Event) {
	p.buf = AppendEvent(p.buf, e)
	p.n++
}

// AddRaw adds an event already encoded with AppendEvent.
func (p *PublishBatch) AddRaw(raw []byte) {
	p.buf = append(p.buf, raw...)
	p.n++
}

// Overhead bounds the bytes a Publish frame adds to its events (length,
// type, sequence number and count).
const Overhead = HeaderLen + 1 + 2*binary.MaxVarintLen64

// Len returns the number of events in the batch.
func (p *PublishBatch) Len() int { return p.n }

// Size returns the encoded size of the events so far.
func (p *PublishBatch) Size() int { return len(p.buf) }

// AppendFrame appends the batch as a Publish frame with sequence number seq.
func (p *PublishBatch) AppendFrame(b []byte, seq uint64) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, byte(TypePublish))
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendUvarint(b, uint64(p.n))
	b = append(b, p.buf...)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-HeaderLen))
	return b
}

// Reset empties the batch, keeping its buffer.
func (p *PublishBatch) Reset() {
	p.buf = p.buf[:0]
	p.n = 0
}

// DeliverItem is one event delivered to the subscriptions it matched.
type DeliverItem struct {
	Subs  []uint64
	Event match.Event
}

// Deliver carries events from a router to a subscriber connection, each
// with the ids of the connection's subscriptions it matched.
type Deliver struct {
	Items []DeliverItem
}

// Type returns TypeDeliver.
func (*Deliver) Type() Type { return TypeDeliver }

// AppendBody appends the item count, then per item the subscription ids
// (count and varints) and the encoded event.
func (m *Deliver) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(m.Items)))
	for _, it := range m.Items {
		b = appendSubs(b, it.Subs)
		b = AppendEvent(b, it.Event)
	}
	return b
}

func appendSubs(b []byte, subs []uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(subs)))
	for _, s := range subs {
		b = binary.AppendUvarint(b, s)
	}
	return b
}

func (d *EventDecoder) decodeDeliver(r *reader) *Deliver {
	n := r.count("deliver item count", 2)
	m := &Deliver{Items: make([]DeliverItem, 0, n)}
	var slab []uint64 // the items' ids, carved from few allocations
	for range n {
		k := r.count("deliver subscription count", 1)
		if r.err == nil && (k == 0 || k > MaxSubsPerItem) {
			r.fail("deliver: item with %d subscription ids (want 1-%d)", k, MaxSubsPerItem)
		}
		if r.err != nil {
			return m
		}
		if k > len(slab) {
			slab = make([]uint64, max(k, min(4*n, len(r.b)))) // an id takes a byte at least
		}
		subs := slab[:k:k]
		slab = slab[k:]
		for i := range subs {
			subs[i] = r.uvarint("deliver subscription id")
		}
		e := d.event(r)
		if r.err != nil {
			return m
		}
		m.Items = append(m.Items, DeliverItem{Subs: subs, Event: e})
	}
	return m
}

// DeliverBatch accumulates Deliver items from already encoded events (a
// Publish's Raw), so a router forwards event bytes without re-encoding.
type DeliverBatch struct {
	buf []byte
	n   int
}

// Add appends one item: the subscription ids (1 to MaxSubsPerItem) and the
// raw encoded event.
func (d *DeliverBatch) Add(subs []uint64, rawEvent []byte) {
	d.buf = appendSubs(d.buf, subs)
	d.buf = append(d.buf, rawEvent...)
	d.n++
}

// Len returns the number of items.
func (d *DeliverBatch) Len() int { return d.n }

// Size returns the encoded size of the items so far.
func (d *DeliverBatch) Size() int { return len(d.buf) }

// AppendFrame appends the items as one Deliver frame.
func (d *DeliverBatch) AppendFrame(b []byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, byte(TypeDeliver))
	b = binary.AppendUvarint(b, uint64(d.n))
	b = append(b, d.buf...)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-HeaderLen))
	return b
}

// Reset empties the batch, keeping its buffer.
func (d *DeliverBatch) Reset() {
	d.buf = d.buf[:0]
	d.n = 0
}
