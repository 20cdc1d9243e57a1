package router

import (
	"encoding/binary"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
)

// deliverFrame is a Deliver frame that the matching loop builds for one
// client connection. The loop encodes each delivery into it once (the
// subscription ids as varints and the event's bytes, copied from its
// Publish frame), and the connection's writer writes the finished frame
// as it is, then puts it back in a pool for reuse (putDeliverFrame).
// Nothing in it points into a Publish frame, so a queued delivery never
// keeps one alive, and the frame holds no pointers for the collector to
// scan but the read times.
type deliverFrame struct {
	batch wire.DeliverBatch
	runs  []readRun // the items' read times, in order
	limit int       // the frame's largest size, in bytes
}

// readRun is n consecutive items of a frame whose Publish frame was read
// at at (for the latency histogram: one observation per run).
type readRun struct {
	at time.Time
	n  int
}

// deliverFrameTarget bounds a Deliver frame the loop builds, below the
// connection's maximum frame: large enough that writing one costs little
// per item (~280 items of ~230 bytes), small enough that reusing a
// connection's frames keeps little memory.
const deliverFrameTarget = 64 << 10

// frameSlack leaves room under the maximum frame for the frame's header.
const frameSlack = 64

// fits reports whether an item of subs and raw can join the frame without
// taking it past its limit. An empty frame takes any item.
func (f *deliverFrame) fits(subs []uint64, raw []byte) bool {
	n := f.batch.Len()
	return n == 0 || f.batch.Size()+len(raw)+binary.MaxVarintLen64*(len(subs)+1) <= f.limit
}

// roomy reports whether the frame is less than half full, in bytes and in
// items (stageMax), so that the loop may go on filling it (reopen).
func (f *deliverFrame) roomy() bool {
	return f.batch.Size() < f.limit/2 && f.batch.Len() < stageMax/2
}

// add encodes one item: subs (1 to wire.MaxSubsPerItem ids) and raw, an
// event encoded as wire.AppendEvent does, read at at.
func (f *deliverFrame) add(subs []uint64, raw []byte, at time.Time) {
	f.batch.Add(subs, raw)
	if k := len(f.runs) - 1; k >= 0 && f.runs[k].at.Equal(at) {
		f.runs[k].n++
		return
	}
	f.runs = append(f.runs, readRun{at: at, n: 1})
}

// len returns the number of items.
func (f *deliverFrame) len() int { return f.batch.Len() }

// reset empties the frame, keeping its buffers.
func (f *deliverFrame) reset() {
	f.batch.Reset()
	clear(f.runs)
	f.runs = f.runs[:0]
}
