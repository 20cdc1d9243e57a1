package wire

// MaxReplicaData bounds the payload of a Replica message: a raft message
// of a replicated pubend (a batch of log entries, or a snapshot of the
// pubend's state), within the largest frame a reader may accept.
const MaxReplicaData = HardMaxFrame - 2*MaxNameLen - 16

// Replica carries one message between two replicas of a replicated
// pubend (package durable/replica) on link control streams: from the
// router From to the router To. A router that is not To forwards it,
// unchanged, on the link toward To; Data is the replica package's peer
// message (the pubend, the sending replica's name and raft id, and the
// raft message or join request), opaque to the routers on the way.
type Replica struct {
	From, To string
	Data     []byte
}

// Type returns TypeReplica.
func (*Replica) Type() Type { return TypeReplica }

// AppendBody appends From and To (strings) and Data (bytes).
func (m *Replica) AppendBody(b []byte) []byte {
	b = appendString(b, m.From)
	b = appendString(b, m.To)
	return appendBytes(b, m.Data)
}

func decodeReplica(r *reader) *Replica {
	m := &Replica{From: r.utf8String("replica from"), To: r.utf8String("replica to")}
	m.Data = r.bytes("replica data")
	switch {
	case r.err != nil:
	case m.From == "" || m.To == "" || len(m.From) > MaxNameLen || len(m.To) > MaxNameLen:
		r.fail("replica: router names must be 1-%d bytes", MaxNameLen)
	case len(m.Data) == 0 || len(m.Data) > MaxReplicaData:
		r.fail("replica: %d bytes of data (want 1-%d)", len(m.Data), MaxReplicaData)
	}
	return m
}
