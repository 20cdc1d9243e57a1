package router

import "sync"

// A client connection's data lane: Deliver frames the matching loop
// builds (deliverFrame), queued in order and written as they are.
//
// When the writer falls behind, the loop goes on filling the last queued
// frame rather than queueing a new small one per step (reopen): frames
// stay large, and a step's deliveries are copied nowhere but into the
// frame. Written frames go back to a pool for the loop to fill again.

// pushFrame queues a Deliver frame the loop filled, all of its items or
// none; false means they do not all fit (the connection is a slow
// consumer) or the queue is closed.
func (q *sendQueue) pushFrame(f *deliverFrame) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.data)+q.items+f.len() > q.dataMax {
		return false
	}
	q.frames = append(q.frames, f)
	q.items += f.len()
	signal(q.dataReady)
	return true
}

// reopen returns the frame for the loop to fill next: the last queued
// frame, taken back from the queue, while the writer has not taken it and
// it is less than half full (roomy); else an empty one. The loop queues
// it again with pushFrame, so the queue's order is kept.
func (q *sendQueue) reopen() *deliverFrame {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := len(q.frames); n > 0 {
		if f := q.frames[n-1]; f.roomy() {
			q.frames[n-1] = nil
			q.frames = q.frames[:n-1]
			q.items -= f.len()
			return f
		}
	}
	return getDeliverFrame(q.maxFrame)
}

// freshFrame returns an empty frame for the loop to fill.
func (q *sendQueue) freshFrame() *deliverFrame {
	q.mu.Lock()
	defer q.mu.Unlock()
	return getDeliverFrame(q.maxFrame)
}

// takeFrames swaps out the queued Deliver frames for the emptied buf.
func (q *sendQueue) takeFrames(buf []*deliverFrame) []*deliverFrame {
	clear(buf)
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.frames
	q.frames = buf[:0]
	q.items = 0
	return out
}

// setMaxFrame sets the largest frame the connection's writer writes.
func (q *sendQueue) setMaxFrame(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.maxFrame = n
}

// deliverFrames holds written frames for any connection's next ones; the
// collector empties it, so idle connections keep no frame memory.
var deliverFrames = sync.Pool{New: func() any { return new(deliverFrame) }}

// keepFrameSize bounds the frames put back in the pool: one that grew
// past it (for a large item) is left to the collector.
const keepFrameSize = 2 * deliverFrameTarget

// getDeliverFrame returns an empty frame for a connection whose writer
// writes frames of at most maxFrame bytes.
func getDeliverFrame(maxFrame int) *deliverFrame {
	f := deliverFrames.Get().(*deliverFrame)
	f.limit = min(deliverFrameTarget, maxFrame-frameSlack)
	return f
}

// putDeliverFrame empties a written frame and puts it back in the pool.
func putDeliverFrame(f *deliverFrame) {
	if f.batch.Size() <= keepFrameSize {
		f.reset()
		deliverFrames.Put(f)
	}
}
