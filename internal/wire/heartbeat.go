package wire

import (
	"bytes"
	"encoding/binary"
)

// HeartbeatPadding is the padding a router puts in its link heartbeats:
// with the frame header it makes the QUIC packet large enough (quic-go
// answers only packets above ~42 bytes) to draw a stateless reset from a
// peer that restarted and no longer knows the connection.
const HeartbeatPadding = 64

// MaxHeartbeatPadding bounds a Heartbeat's padding.
const MaxHeartbeatPadding = 1024

// Heartbeat is sent periodically on an idle link's control stream (and
// may be sent by a client) so that a peer that restarted answers with a
// stateless reset at once instead of the connection lingering until its
// idle timeout. Its body is Padding zero bytes; the receiver ignores it.
type Heartbeat struct {
	Padding int
}

// Type returns TypeHeartbeat.
func (*Heartbeat) Type() Type { return TypeHeartbeat }

// AppendBody appends the padding length and that many zero bytes.
func (m *Heartbeat) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(m.Padding))
	return append(b, make([]byte, m.Padding)...)
}

func decodeHeartbeat(r *reader) *Heartbeat {
	pad := r.bytes("heartbeat padding")
	switch {
	case r.err != nil:
	case len(pad) > MaxHeartbeatPadding:
		r.fail("heartbeat: %d bytes of padding exceed %d", len(pad), MaxHeartbeatPadding)
	case bytes.ContainsFunc(pad, func(c rune) bool { return c != 0 }):
		r.fail("heartbeat: padding is not all zero bytes")
	}
	return &Heartbeat{Padding: len(pad)}
}
