package wire

import "encoding/binary"

// LinkPublish carries events between routers in exact forwarding mode: a
// Publish batch whose events each come with a witness, the FilterHash of a
// filter the receiving router sent to the sender (in Routes) that the
// sender found the event to match, or 0 when it names none. A router that
// holds the witnessed filter from every link it could forward the event
// on knows the answer of its link table from that one filter, without its
// index (docs/protocol.md, "Events on links"). A witness is a hint, never
// trusted for delivery (local clients are always matched) and checked
// before it decides anything: the receiver matches the event against the
// witnessed filter, so a false witness (a neighbour's bug) costs it only
// its index lookup.
// A collision of two held filters' hashes can forward an event one hop too
// far, where the next router filters it again.
//
// The body is Publish's (seq, count, events) followed by one 8-byte
// little-endian witness per event, so Raw still aliases each event's
// encoding alone.
type LinkPublish struct {
	Publish
	Witness []uint64
}

// Type returns TypeLinkPublish.
func (*LinkPublish) Type() Type { return TypeLinkPublish }

// AppendBody appends the Publish body and the witnesses; Witness must have
// one entry per event.
func (m *LinkPublish) AppendBody(b []byte) []byte {
	b = m.Publish.AppendBody(b)
	for _, w := range m.Witness {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func (d *EventDecoder) decodeLinkPublish(r *reader) *LinkPublish {
	m := &LinkPublish{Publish: *d.decodePublish(r)}
	if r.err != nil {
		return m
	}
	n := len(m.Events)
	if len(r.b) != 8*n {
		r.fail("link-publish: %d bytes of witnesses for %d events", len(r.b), n)
		return m
	}
	m.Witness = make([]uint64, n)
	r.fixed64s("link-publish witness", m.Witness)
	return m
}

// DecodeOwnedLinkPublish decodes the body of a LinkPublish frame the caller
// hands over, as DecodeOwnedPublish does a Publish body (the events alias
// body, which must never change afterwards).
func (d *EventDecoder) DecodeOwnedLinkPublish(body []byte) (*LinkPublish, error) {
	r := ownedReader(body)
	m := d.decodeLinkPublish(&r)
	if err := r.end(TypeLinkPublish.String()); err != nil {
		return nil, err
	}
	return m, nil
}

// LinkSlack bounds how many bytes a LinkPublish or BloomPublish frame
// carrying one event may exceed the Publish frame that event came in: a
// larger sequence number and count, and the witness or the summary (of at
// most MaxBloomM bits) with its length and flags. A router reads its
// links' data streams with this much more than its MaxFrame, so that an
// event it accepted from a client in a frame of MaxFrame bytes crosses
// links between routers of the same MaxFrame.
const LinkSlack = 2*binary.MaxVarintLen64 + 8 + MaxBloomM/8 + 2*binary.MaxVarintLen64

// LinkPublishBatch accumulates encoded events and their witnesses for one
// LinkPublish frame, built in place like PublishBatch's.
type LinkPublishBatch struct {
	f       frameBuf
	witness []uint64
}

// AddRaw adds an event already encoded with AppendEvent, with its witness.
func (p *LinkPublishBatch) AddRaw(raw []byte, witness uint64) {
	p.f.add(raw)
	p.witness = append(p.witness, witness)
}

// Len returns the number of events in the batch.
func (p *LinkPublishBatch) Len() int { return p.f.n }

// Size returns the encoded size of the events and witnesses so far.
func (p *LinkPublishBatch) Size() int { return p.f.size() + 8*len(p.witness) }

// Frame returns the batch as a LinkPublish frame with sequence number seq,
// built in place: it aliases the batch and is valid until the next AddRaw
// or Reset. The batch is unchanged: more events may follow, and the next
// frame holds them all.
func (p *LinkPublishBatch) Frame(seq uint64) []byte {
	p.f.room()
	events := len(p.f.buf)
	for _, w := range p.witness {
		p.f.buf = binary.LittleEndian.AppendUint64(p.f.buf, w)
	}
	frame := p.f.frame(TypeLinkPublish, seq, uint64(p.f.n))
	p.f.buf = p.f.buf[:events] // the witnesses stay in the frame, past the events
	return frame
}

// Reset empties the batch, keeping its buffers.
func (p *LinkPublishBatch) Reset() {
	p.f.reset()
	p.witness = p.witness[:0]
}

// FilterHash returns the witness of a filter: a 64-bit FNV-1a hash of its
// canonical text (match.Filter.String), never 0 (0 means no witness).
func FilterHash(canonical string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(canonical); i++ {
		h ^= uint64(canonical[i])
		h *= prime
	}
	return max(h, 1)
}
