package durable

// sendBuf is a broker's outgoing messages between two Readies. One step
// that answers a long nack emits thousands of envelopes, each several
// hundred bytes; grown from empty by appends they were copied several
// times over at every Ready, so each buffer starts with the capacity the
// previous one needed.
type sendBuf struct {
	msgs []Envelope
	last int // how many the previous take returned
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
	return m
}
