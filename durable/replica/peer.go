package replica

import (
	"encoding/binary"
	"errors"
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
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
	// One allocation: the header's bound, then the body (a raft
	// message's size, or a chunk's).
	n := 3 + 2*binary.MaxVarintLen64 + len(m.Pubend) + len(m.From) + binary.MaxVarintLen64
	switch m.Kind {
	case PeerRaft:
		n += binary.MaxVarintLen64 + proto.Size(m.Raft)
	case PeerChunk:
		n += 4*binary.MaxVarintLen64 + len(m.Chunk.Data)
	}
	e.B = make([]byte, 0, n)
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

// DecodePeer reads a peer message's header, for drivers that route it by
// pubend (and for tools): the pubend and the sender's name. It does not
// decode the body (a raft message with its entries): the replica that
// steps the message does, and refuses it then if it does not decode.
func DecodePeer(b []byte) (pubend, from string, err error) {
	d := newDec(b)
	m := decodeHeader(&d)
	if d.Err != nil {
		return "", "", fmt.Errorf("peer message: %w", d.Err)
	}
	return m.Pubend, m.From, nil
}

// decodeHeader reads the fields every peer message starts with and checks
// them.
func decodeHeader(d *dec) peerMsg {
	d.version()
	m := peerMsg{Kind: PeerKind(d.Byte()), Pubend: d.Str(), From: d.Str(), FromID: d.Uvarint()}
	switch {
	case d.Err != nil:
	case len(m.Pubend) == 0 || len(m.Pubend) > maxPeerName || len(m.From) == 0 || len(m.From) > maxPeerName:
		d.Fail(errors.New("empty or long name"))
	case m.FromID == 0:
		d.Fail(errors.New("zero sender id"))
	}
	return m
}

func decodePeer(b []byte) (peerMsg, error) {
	d := newDec(b)
	m := decodeHeader(&d)
	switch {
	case d.Err != nil:
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
