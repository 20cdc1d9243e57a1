package replica

import (
	"bytes"
	"fmt"
)

// A peer message larger than Config.MaxChunk (a snapshot: every key of
// the pubend's state, however many events it holds) travels as PeerChunk
// messages of at most MaxChunk bytes each, so that whatever carries peer
// messages (a router link, whose frames are bounded) needs no message of
// more. The receiver keeps one message in assembly per sender id: a chunk
// of another message from the same sender starts over (raft sends a
// snapshot again when one was lost), and the whole is stepped once every
// chunk is in. Assembled messages are bounded by maxChunks chunks.

// chunk is one piece of a peer message.
type chunk struct {
	ID           uint64 // the sender's message number
	Index, Total uint64
	Data         []byte
}

// maxChunks bounds the chunks of one message (with the default MaxChunk,
// 4 GiB).
const maxChunks = 1 << 14

// assembly is a peer message being put together.
type assembly struct {
	id     uint64
	pieces [][]byte
	have   uint64
}

// chunked splits an encoded peer message into chunks, or returns it as it
// is when it fits.
func (r *Replica) chunked(data []byte) ([][]byte, error) {
	size := int(r.cfg.MaxChunk)
	if len(data) <= size {
		return [][]byte{data}, nil
	}
	total := (len(data) + size - 1) / size
	if total > maxChunks {
		return nil, fmt.Errorf("replica %s: a peer message of %d bytes is more than %d chunks", r.cfg.Name, len(data), maxChunks)
	}
	r.chunkSeq++
	out := make([][]byte, 0, total)
	for i := range total {
		piece := data[i*size : min(len(data), (i+1)*size)]
		m := peerMsg{Kind: PeerChunk, Pubend: r.cfg.Pubend.ID, From: r.cfg.Name, FromID: r.id,
			Chunk: chunk{ID: r.chunkSeq, Index: uint64(i), Total: uint64(total), Data: piece}}
		b, err := m.encode()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	r.Stats.Chunked++
	return out, nil
}

// addChunk files a chunk; once its message is complete it returns the
// message's data (ok), for StepPeer to step.
func (r *Replica) addChunk(from uint64, c chunk) (data []byte, ok bool) {
	a := r.assemblies[from]
	if a == nil || a.id != c.ID || uint64(len(a.pieces)) != c.Total {
		a = &assembly{id: c.ID, pieces: make([][]byte, c.Total)}
		r.assemblies[from] = a
	}
	if a.pieces[c.Index] == nil {
		a.pieces[c.Index] = bytes.Clone(c.Data)
		a.have++
	}
	if a.have < c.Total {
		return nil, false
	}
	delete(r.assemblies, from)
	return bytes.Join(a.pieces, nil), true
}
