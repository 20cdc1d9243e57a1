package replica

import (
	"reflect"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// FuzzDecodePeer: a peer message from the network either decodes (and
// re-encodes to a message that decodes the same) or is refused, without
// panicking.
func FuzzDecodePeer(f *testing.F) {
	term, idx := uint64(3), uint64(9)
	typ := pb.MsgApp
	ok, _ := peerMsg{Kind: PeerRaft, Pubend: "p", From: "r1", FromID: 5,
		Raft: &pb.Message{Type: &typ, Term: &term, Index: &idx}}.encode()
	join, _ := peerMsg{Kind: PeerJoin, Pubend: "p", From: "r2", FromID: 7}.encode()
	piece, _ := peerMsg{Kind: PeerChunk, Pubend: "p", From: "r3", FromID: 8, Chunk: chunk{ID: 2, Index: 1, Total: 3, Data: ok}}.encode()
	f.Add(ok)
	f.Add(join)
	f.Add(piece)
	f.Add([]byte{1, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodePeer(b)
		if err != nil {
			return
		}
		again, err := m.encode()
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", m, err)
		}
		m2, err := decodePeer(again)
		if err != nil || m2.Kind != m.Kind || m2.Pubend != m.Pubend || m2.From != m.From || m2.FromID != m.FromID ||
			(m.Raft != nil && !proto.Equal(m.Raft, m2.Raft)) || !reflect.DeepEqual(m.Chunk, m2.Chunk) {
			t.Fatalf("round trip of %+v: %+v, %v", m, m2, err)
		}
	})
}

// FuzzDecodeProposal: a log entry's data decodes to a proposal that
// encodes back to the same bytes, or is refused.
func FuzzDecodeProposal(f *testing.F) {
	b := &durable.Batch{}
	b.Set([]byte("k"), []byte("v"))
	b.Delete([]byte("d"))
	b.DeleteRange([]byte("a"), []byte("b"))
	f.Add(proposal{Proposer: 1, Activation: 2, Seq: 3, Ops: b.Ops}.encode())
	f.Add(proposal{Proposer: 1, Fence: true}.encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeProposal(data)
		if err != nil {
			return
		}
		// Varints need not be minimal, so compare what decodes.
		again, err := decodeProposal(p.encode())
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("%x decodes to %+v, which round-trips to %+v, %v", data, p, again, err)
		}
	})
}

// FuzzDecodeSnapshot: snapshot data decodes and re-encodes identically,
// or is refused.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(encodeSnapshot([]kv{{k: []byte("sk"), v: []byte("v")}, {k: []byte("m1"), v: nil}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		kvs, err := decodeSnapshot(data)
		if err != nil {
			return
		}
		again, err := decodeSnapshot(encodeSnapshot(kvs))
		if err != nil || !reflect.DeepEqual(again, kvs) {
			t.Fatalf("%x decodes to %v, which round-trips to %v, %v", data, kvs, again, err)
		}
	})
}
