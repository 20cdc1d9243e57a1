package replica

import (
	"errors"
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
)

// PeerKind is the kind of a message between the replicas of a pubend.
type PeerKind uint8

// The peer message kinds.
const (
	// PeerRaft carries one raft message.
	PeerRaft PeerKind = iota + 1
	// PeerJoin asks the leader to make the sender (a replica that came
	// back with an empty store, under a fresh id) a voter in place of the
	// id its name had.
	PeerJoin
	// PeerChunk carries one piece of a peer message too large for one
	// (a snapshot: chunks.go).
	PeerChunk
)

// PeerMsg is a message between two replicas of one pubend: Data goes from
// the replica named From to the one named To, on whatever carries them
// (a router link, the simulator's network).
type PeerMsg struct {
	From, To string
	Data     []byte
}

// peerMsg is the decoded form of PeerMsg.Data.
type peerMsg struct {
	Kind   PeerKind
	Pubend string
	From   string // the sender's name
	FromID uint64 // the sender's raft id
	Raft   *pb.Message
	Chunk  chunk // PeerChunk
}

// maxPeerName bounds the names a peer message carries.
const maxPeerName = 255

func (m peerMsg) encode() ([]byte, error) {
	e := enc{}
	e.version(codecV1)
	e.Byte(byte(m.Kind))
	e.Str(m.Pubend)
	e.Str(m.From)
	e.Uvarint(m.FromID)
	switch m.Kind {
	case PeerRaft:
		if err := e.msg(m.Raft); err != nil {
			return nil, fmt.Errorf("peer message: %w", err)
		}
	case PeerChunk:
		e.Uvarint(m.Chunk.ID)
		e.Uvarint(uint64(m.Chunk.Index))
		e.Uvarint(uint64(m.Chunk.Total))
		e.Bytes(m.Chunk.Data)
	}
	return e.B, nil
}

// DecodePeer decodes a peer message's data, for drivers that route it by
// pubend (and for tools). It returns the pubend and the sender's name.
func DecodePeer(b []byte) (pubend, from string, err error) {
	m, err := decodePeer(b)
	return m.Pubend, m.From, err
}

func decodePeer(b []byte) (peerMsg, error) {
	d := newDec(b)
	d.version()
	m := peerMsg{Kind: PeerKind(d.Byte()), Pubend: d.Str(), From: d.Str(), FromID: d.Uvarint()}
	switch {
	case d.Err != nil:
	case len(m.Pubend) == 0 || len(m.Pubend) > maxPeerName || len(m.From) == 0 || len(m.From) > maxPeerName:
		d.Fail(errors.New("empty or long name"))
	case m.FromID == 0:
		d.Fail(errors.New("zero sender id"))
	case m.Kind == PeerRaft:
		m.Raft = &pb.Message{}
		d.msg(m.Raft)
	case m.Kind == PeerJoin:
	case m.Kind == PeerChunk:
		m.Chunk = chunk{ID: d.Uvarint(), Index: d.Uvarint(), Total: d.Uvarint(), Data: d.Bytes()}
		if d.Err == nil && (m.Chunk.Total < 2 || m.Chunk.Total > maxChunks || m.Chunk.Index >= m.Chunk.Total || len(m.Chunk.Data) == 0) {
			d.Fail(fmt.Errorf("chunk %d of %d", m.Chunk.Index, m.Chunk.Total))
		}
	default:
		d.Fail(fmt.Errorf("unknown kind %d", m.Kind))
	}
	if err := d.Done(); err != nil {
		return peerMsg{}, fmt.Errorf("peer message: %w", err)
	}
	return m, nil
}
