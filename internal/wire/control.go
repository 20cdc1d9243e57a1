package wire

import (
	"encoding/binary"
	"fmt"
)

// MaxFilterLen bounds a subscription's filter text (routers refuse
// longer ones with CodeBadFilter).
const MaxFilterLen = 64 << 10

// MaxErrorLen bounds an Error frame's message.
const MaxErrorLen = 4 << 10

// Subscribe asks the router to install a filter under a subscription id
// chosen by the client (unique per connection).
type Subscribe struct {
	ID     uint64
	Filter string
}

// Type returns TypeSubscribe.
func (*Subscribe) Type() Type { return TypeSubscribe }

// AppendBody appends id and filter text.
func (m *Subscribe) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.ID)
	return appendString(b, m.Filter)
}

// decodeSubscribe does not bound the filter's length (the frame limit
// does): a router refuses a filter longer than MaxFilterLen like any bad
// filter, that subscription alone, rather than as a malformed frame that
// closes the connection.
func decodeSubscribe(r *reader) *Subscribe {
	return &Subscribe{ID: r.uvarint("subscribe id"), Filter: r.utf8String("subscribe filter")}
}

// Unsubscribe removes a subscription.
type Unsubscribe struct {
	ID uint64
}

// Type returns TypeUnsubscribe.
func (*Unsubscribe) Type() Type { return TypeUnsubscribe }

// AppendBody appends the id.
func (m *Unsubscribe) AppendBody(b []byte) []byte { return binary.AppendUvarint(b, m.ID) }

func decodeUnsubscribe(r *reader) *Unsubscribe {
	return &Unsubscribe{ID: r.uvarint("unsubscribe id")}
}

// Ack confirms a request: a subscription installed (About TypeSubscribe,
// ID the subscription), removed (TypeUnsubscribe), a publish batch
// accepted (TypePublish, ID the batch sequence number), or every filter of
// a SubscribeBatch installed (TypeSubscribeBatch, ID its first id).
type Ack struct {
	About Type
	ID    uint64
}

// Type returns TypeAck.
func (*Ack) Type() Type { return TypeAck }

// AppendBody appends the type acknowledged and the id.
func (m *Ack) AppendBody(b []byte) []byte {
	b = append(b, byte(m.About))
	return binary.AppendUvarint(b, m.ID)
}

func decodeAck(r *reader) *Ack {
	m := &Ack{About: Type(r.byte("ack type")), ID: r.uvarint("ack id")}
	if r.err == nil && m.About != TypeSubscribe && m.About != TypeUnsubscribe && m.About != TypePublish && m.About != TypeSubscribeBatch {
		r.fail("ack: cannot acknowledge %s", m.About)
	}
	return m
}

// Error reports a failure: a code, the message type and id it answers
// (About 0 when it answers nothing in particular) and a human-readable
// message. Fatal codes precede the closing of the connection.
type Error struct {
	Code  Code
	About Type
	Ref   uint64
	Msg   string
}

// Type returns TypeError.
func (*Error) Type() Type { return TypeError }

// AppendBody appends code, type, ref and message.
func (m *Error) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(m.Code))
	b = append(b, byte(m.About))
	b = binary.AppendUvarint(b, m.Ref)
	return appendString(b, m.Msg)
}

// Err returns the error as a *ProtocolError for callers.
func (m *Error) Err() *ProtocolError {
	if m.About != 0 {
		return Errorf(m.Code, "%s %d: %s", m.About, m.Ref, m.Msg)
	}
	return Errorf(m.Code, "%s", m.Msg)
}

// String renders the error for logs.
func (m *Error) String() string { return fmt.Sprint(m.Err()) }

func decodeError(r *reader) *Error {
	m := &Error{Code: Code(r.uvarint("error code")), About: Type(r.byte("error type"))}
	m.Ref = r.uvarint("error ref")
	m.Msg = r.utf8String("error message")
	switch {
	case r.err != nil:
	case m.About != 0 && !m.About.Known():
		r.fail("error: about unknown type %d", byte(m.About))
	case len(m.Msg) > MaxErrorLen:
		r.fail("error: message of %d bytes exceeds %d", len(m.Msg), MaxErrorLen)
	}
	return m
}
