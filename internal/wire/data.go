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
	// AppendBody ignores it. Read it through RawAt: a batch decoded from
	// a PublishDict frame writes an event's plain encoding out on demand,
	// and has no Raw at all until RawAll.
	Raw [][]byte
	// dict writes out Raw for a batch decoded from a PublishDict frame
	// (publishdict_decode.go).
	dict *dictRaw
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
	if r.shared != "" {
		defer d.sharedFrameDone(len(r.shared))
	}
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
	r := ownedReader(body)
	m := d.decodePublish(&r)
	if err := r.end(TypePublish.String()); err != nil {
		return nil, err
	}
	return m, nil
}

// ownedReader returns a reader of a body the caller hands over, whose
// decoded strings alias it (DecodeOwnedPublish, DecodeOwnedLinkPublish).
func ownedReader(body []byte) reader {
	r := reader{b: body}
	if len(body) > 0 {
		r.shared = unsafe.String(unsafe.SliceData(body), len(body))
	}
	return r
}

// PublishBatch accumulates encoded events for one Publish frame, so a
// publisher encodes each event once, straight into the batch, and the
// finished frame is the batch's own buffer (Frame).
type PublishBatch struct{ f frameBuf }

// Add encodes e into the batch.
func (p *PublishBatch) Add(e match.Event) {
	p.f.room()
	p.f.buf = AppendEvent(p.f.buf, e)
	p.f.n++
}

// AddRaw adds an event already encoded with AppendEvent.
func (p *PublishBatch) AddRaw(raw []byte) { p.f.add(raw) }

// Overhead bounds the bytes a Publish frame adds to its events (length,
// type, sequence number and count).
const Overhead = HeaderLen + 1 + 2*binary.MaxVarintLen64

// Len returns the number of events in the batch.
func (p *PublishBatch) Len() int { return p.f.n }

// Size returns the encoded size of the events so far.
func (p *PublishBatch) Size() int { return p.f.size() }

// Frame returns the batch as a Publish frame with sequence number seq,
// built in place: it aliases the batch and is valid until the next Add,
// AddRaw or Reset.
func (p *PublishBatch) Frame(seq uint64) []byte {
	return p.f.frame(TypePublish, seq, uint64(p.f.n))
}

// AppendFrame appends the batch as a Publish frame with sequence number seq.
func (p *PublishBatch) AppendFrame(b []byte, seq uint64) []byte {
	return append(b, p.Frame(seq)...)
}

// Reset empties the batch, keeping its buffer.
func (p *PublishBatch) Reset() { p.f.reset() }

// frameBuf is a frame being built whose header goes last, into room
// reserved before the items, so that the finished frame is a slice of the
// buffer: the items are copied once, into the batch, not again into a
// frame.
type frameBuf struct {
	buf []byte // frameRoom bytes of room, then the items (empty until the first)
	n   int
}

// frameRoom holds the largest header: length, type and two varints.
const frameRoom = HeaderLen + 1 + 2*binary.MaxVarintLen64

var zeroRoom [frameRoom]byte

// room makes sure buf starts with the header room.
func (f *frameBuf) room() {
	if len(f.buf) < frameRoom {
		f.buf = append(f.buf[:0], zeroRoom[:]...)
	}
}

func (f *frameBuf) add(raw []byte) {
	f.room()
	f.buf = append(f.buf, raw...)
	f.n++
}

func (f *frameBuf) size() int { return max(0, len(f.buf)-frameRoom) }

func (f *frameBuf) reset() {
	f.buf = f.buf[:0]
	f.n = 0
}

// frame writes the header (type t, then head as varints, at most two)
// right before the items and returns the frame.
func (f *frameBuf) frame(t Type, head ...uint64) []byte {
	f.room()
	var h [frameRoom]byte
	hb := append(h[:0], 0, 0, 0, 0, byte(t))
	for _, v := range head {
		hb = binary.AppendUvarint(hb, v)
	}
	start := frameRoom - len(hb)
	copy(f.buf[start:], hb)
	binary.BigEndian.PutUint32(f.buf[start:], uint32(len(f.buf)-start-HeaderLen))
	return f.buf[start:]
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
	if r.shared != "" {
		defer d.sharedFrameDone(len(r.shared))
	}
	n := r.count("deliver item count", 2)
	m := &Deliver{Items: make([]DeliverItem, 0, n)}
	var slab []uint64 // the items' ids, carved from few allocations
	for range n {
		k, ok := deliverSubCount(r)
		if !ok {
			return m
		}
		if k > len(slab) {
			slab = make([]uint64, max(k, min(4*n, len(r.b)))) // an id takes a byte at least
		}
		subs := slab[:k:k]
		slab = slab[k:]
		if !readIDs(r, subs) {
			return m
		}
		e := d.event(r)
		if r.err != nil {
			return m
		}
		m.Items = append(m.Items, DeliverItem{Subs: subs, Event: e})
	}
	return m
}

// deliverSubCount reads the subscription count of a Deliver item and
// checks it (1 to MaxSubsPerItem), for decodeDeliver and
// DecodeBorrowedDeliver; false when the reader failed.
func deliverSubCount(r *reader) (int, bool) {
	k := r.count("deliver subscription count", 1)
	if r.err == nil && (k == 0 || k > MaxSubsPerItem) {
		r.fail("deliver: item with %d subscription ids (want 1-%d)", k, MaxSubsPerItem)
	}
	return k, r.err == nil
}

// readIDs reads len(ids) varint subscription ids, the position in a local
// variable (no write barrier per id, as in fastAttr); the reader words a
// failure.
func readIDs(r *reader, ids []uint64) bool {
	b := r.b
	for i := range ids {
		switch { // one or two bytes (ids below 16,384) inline
		case len(b) > 0 && b[0] < 0x80:
			ids[i], b = uint64(b[0]), b[1:]
			continue
		case len(b) > 1 && b[1] < 0x80:
			ids[i], b = uint64(b[0]&0x7f)|uint64(b[1])<<7, b[2:]
			continue
		}
		v, n := binary.Uvarint(b)
		if n <= 0 {
			r.b = b
			r.uvarint("deliver subscription id") // fails, saying why
			return false
		}
		ids[i], b = v, b[n:]
	}
	r.b = b
	return true
}

// DeliverBatch accumulates Deliver items from already encoded events (a
// Publish's Raw), so a router forwards event bytes without re-encoding,
// and the finished frame is the batch's own buffer (Frame).
type DeliverBatch struct{ f frameBuf }

// Add appends one item: the subscription ids (1 to MaxSubsPerItem) and the
// raw encoded event.
func (d *DeliverBatch) Add(subs []uint64, rawEvent []byte) {
	d.f.room()
	d.f.buf = appendSubs(d.f.buf, subs)
	d.f.buf = append(d.f.buf, rawEvent...)
	d.f.n++
}

// Len returns the number of items.
func (d *DeliverBatch) Len() int { return d.f.n }

// Size returns the encoded size of the items so far.
func (d *DeliverBatch) Size() int { return d.f.size() }

// Frame returns the items as one Deliver frame, built in place: it aliases
// the batch and is valid until the next Add or Reset.
func (d *DeliverBatch) Frame() []byte { return d.f.frame(TypeDeliver, uint64(d.f.n)) }

// AppendFrame appends the items as one Deliver frame.
func (d *DeliverBatch) AppendFrame(b []byte) []byte { return append(b, d.Frame()...) }

// Reset empties the batch, keeping its buffer.
func (d *DeliverBatch) Reset() { d.f.reset() }
