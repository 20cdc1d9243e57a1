package replica

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/memstore"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// appendMsg is a raft append of n entries, each carrying a proposal of
// ops pubend writes.
func appendMsg(n, ops int) *pb.Message {
	typ, to, from, term, idx := pb.MsgApp, uint64(2), uint64(1), uint64(3), uint64(9)
	m := &pb.Message{Type: &typ, To: &to, From: &from, Term: &term, Index: &idx}
	for i := range n {
		b := &durable.Batch{}
		for k := range ops {
			b.Set(fmt.Appendf(nil, "log/%04d/%04d", i, k), bytes.Repeat([]byte{byte(k)}, 200))
		}
		t, x := term, idx+1+uint64(i)
		m.Entries = append(m.Entries, &pb.Entry{Term: &t, Index: &x,
			Data: proposal{Proposer: 1, Activation: 1, Seq: uint64(i + 2), Ops: b.Ops}.encode()})
	}
	return m
}

// TestDecodePeerReadsTheHeader: a driver routes a peer message by its
// header alone (DecodePeer), so a raft append is decoded once, by the
// replica that steps it; a body that does not decode is refused there,
// changing nothing.
func TestDecodePeerReadsTheHeader(t *testing.T) {
	m := appendMsg(2, 3)
	data, err := peerMsg{Kind: PeerRaft, Pubend: "p", From: "r1", FromID: nameID("r1"), Raft: m}.encode()
	if err != nil {
		t.Fatal(err)
	}
	// The same header, with a raft message whose last byte is cut.
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	e := enc{}
	e.version(codecV1)
	e.Byte(byte(PeerRaft))
	e.Str("p")
	e.Str("r1")
	e.Uvarint(nameID("r1"))
	e.Bytes(body[:len(body)-1])
	bad := e.B
	for _, b := range [][]byte{data, bad} {
		p, from, err := DecodePeer(b)
		if err != nil || p != "p" || from != "r1" {
			t.Fatalf("DecodePeer: %q %q %v", p, from, err)
		}
	}
	if _, _, err := DecodePeer(bad[:4]); err == nil {
		t.Fatal("DecodePeer read a cut header")
	}
	if _, err := decodePeer(bad); err == nil {
		t.Fatal("a cut raft message decoded")
	}
	r, err := New(Config{Pubend: pubendConfig(), Name: "r2", Replicas: []string{"r1", "r2", "r3"},
		Rand: rand.New(rand.NewPCG(1, 2))}, memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	before := r.Status()
	if err := r.StepPeer(1, bad); err == nil || !strings.Contains(err.Error(), "peer message") {
		t.Fatalf("StepPeer of a cut raft message: %v", err)
	}
	if after := r.Status(); after.GetTerm() != before.GetTerm() || after.Lead != before.Lead || after.GetCommit() != before.GetCommit() {
		t.Fatalf("the refused message changed the replica: %+v -> %+v", before, after)
	}
	if err := r.StepPeer(1, data); err != nil {
		t.Fatalf("StepPeer of the whole message: %v", err)
	}
}

// TestCodecAllocations: the per-entry paths allocate a fixed number of
// times whatever the entry holds: a proposal decodes its ops in place
// (one slice of ops), its ops are prefixed with their keys in one piece,
// and a raft append is encoded into one buffer.
func TestCodecAllocations(t *testing.T) {
	m := appendMsg(4, 64)
	data := m.Entries[0].Data
	if n := testing.AllocsPerRun(50, func() {
		if _, err := decodeProposal(data); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("decodeProposal of 64 ops: %v allocations, want 1", n)
	}
	p, err := decodeProposal(data)
	if err != nil {
		t.Fatal(err)
	}
	s := prefixStore{pre: prefix("p", tableState)}
	if n := testing.AllocsPerRun(50, func() { s.appendPrefixed(nil, p.Ops) }); n != 2 {
		t.Errorf("appendPrefixed of 64 ops: %v allocations, want 2", n)
	}
	msg := peerMsg{Kind: PeerRaft, Pubend: "p", From: "r1", FromID: 5, Raft: m}
	if n := testing.AllocsPerRun(50, func() {
		if _, err := msg.encode(); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("encoding an append of 4 entries: %v allocations, want 1", n)
	}
	got, err := decodePeer(must(msg.encode()))
	if err != nil || len(got.Raft.GetEntries()) != 4 || !bytes.Equal(got.Raft.GetEntries()[3].GetData(), m.Entries[3].GetData()) {
		t.Fatalf("the append does not round-trip: %v", err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
