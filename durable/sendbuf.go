package durable

// sendBuf is a broker's outgoing messages between two Readies. One step
// that answers a long nack emits thousands of envelopes, each several
// hundred bytes; grown from empty by appends they were copied several
// times over at every Ready, so each buffer starts with the capacity the
// previous one needed.
type sendBuf struct {
	msgs []Envelope
	last int    // how many the previous take returned
	gen  uint64 // counts the takes: a mark of an earlier buffer is stale
}

// sendMark names one message of a sendBuf, while it is not taken. The
// zero mark names none.
type sendMark struct {
	gen uint64 // the buffer's gen + 1
	idx int
}

// mark returns the mark of the message add appended last.
func (b *sendBuf) mark() sendMark { return sendMark{gen: b.gen + 1, idx: len(b.msgs) - 1} }

// at returns the message m names, or nil once it was taken.
func (b *sendBuf) at(m sendMark) *Envelope {
	if m.gen != b.gen+1 || m.idx < 0 || m.idx >= len(b.msgs) {
		return nil
	}
	return &b.msgs[m.idx]
}

// add appends one message.
func (b *sendBuf) add(env Envelope) {
	if b.msgs == nil && b.last > 0 {
		b.msgs = make([]Envelope, 0, b.last)
	}
	b.msgs = append(b.msgs, env)
}

// take hands the messages over (the caller owns the slice) and starts an
// empty buffer.
func (b *sendBuf) take() []Envelope {
	m := b.msgs
	b.msgs, b.last = nil, len(m)
	b.gen++
	return m
}
