package replica

import (
	"bytes"
	"strings"
	"testing"
)

// TestChunkAssembly: chunks are put together whatever their order and
// duplicates; a chunk of a newer message from the same sender starts
// over; an assembled message that does not decode, or is itself a chunk
// or from another sender, is refused; bad chunk fields are refused at
// decoding.
func TestChunkAssembly(t *testing.T) {
	c := newCluster(t, 3, 3)
	r := c.reps["r1"]
	pieces := func(id uint64, whole []byte, n int) [][]byte {
		var out [][]byte
		size := (len(whole) + n - 1) / n
		for i := range n {
			b, err := peerMsg{Kind: PeerChunk, Pubend: "p", From: "r2", FromID: nameID("r2"),
				Chunk: chunk{ID: id, Index: uint64(i), Total: uint64(n), Data: whole[i*size : min(len(whole), (i+1)*size)]}}.encode()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	join, _ := peerMsg{Kind: PeerJoin, Pubend: "p", From: "r2", FromID: nameID("r2")}.encode()
	ps := pieces(1, join, 3)
	for _, p := range [][]byte{ps[2], ps[0], ps[0]} {
		if err := r.StepPeer(c.now, p); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.assemblies) != 1 {
		t.Fatalf("assemblies %v", r.assemblies)
	}
	// A newer message from r2 starts over: the old pieces are dropped.
	if err := r.StepPeer(c.now, pieces(2, join, 3)[0]); err != nil || r.assemblies[nameID("r2")].id != 2 {
		t.Fatalf("newer message: %v %+v", err, r.assemblies[nameID("r2")])
	}
	for _, p := range pieces(3, join, 3) {
		if err := r.StepPeer(c.now, p); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.assemblies) != 0 {
		t.Fatalf("a complete message left in assembly: %v", r.assemblies)
	}
	garbage := bytes.Repeat([]byte{7}, 100)
	var err error
	for _, p := range pieces(4, garbage, 2) {
		err = r.StepPeer(c.now, p)
	}
	if err == nil || !strings.Contains(err.Error(), "assembled peer message") {
		t.Fatalf("garbage assembled: %v", err)
	}
	inner, _ := peerMsg{Kind: PeerJoin, Pubend: "p", From: "r3", FromID: nameID("r3")}.encode()
	for _, p := range pieces(5, inner, 2) {
		err = r.StepPeer(c.now, p)
	}
	if err == nil {
		t.Fatal("an assembled message from another sender accepted")
	}
	for _, ch := range []chunk{{ID: 1, Index: 3, Total: 3, Data: []byte{1}}, {ID: 1, Index: 0, Total: 1, Data: []byte{1}},
		{ID: 1, Index: 0, Total: maxChunks + 1, Data: []byte{1}}, {ID: 1, Index: 0, Total: 2}} {
		b, _ := peerMsg{Kind: PeerChunk, Pubend: "p", From: "r2", FromID: 9, Chunk: ch}.encode()
		if _, err := decodePeer(b); err == nil {
			t.Fatalf("chunk %+v accepted", ch)
		}
	}
}
