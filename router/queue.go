package router

import (
	"sync"

	"github.com/sift-pubsub/sift/internal/wire"
)

// delivery is one item queued for a router link: raw is a LinkPublish event
// or a BloomPublish entry, and on a link in exact mode witness names a filter of the link's that the event matched
// (linktable.go; 0: none). Deliveries to clients are not queued as
// deliveries: the loop encodes them into Deliver frames (deliverFrame).
type delivery struct {
	raw     []byte
	witness uint64
}

// sendQueue is a connection's bounded outbound queue, filled by the
// matching loop without ever blocking and drained by the connection's
// writer. Control frames and data queue separately, so control never
// waits behind data. A client connection's data is Deliver frames that
// the loop built (frames); a router link's is deliveries (data).
type sendQueue struct {
	mu      sync.Mutex
	ctrl    [][]byte
	data    []delivery
	frames  []*deliverFrame // queue_frames.go
	items   int             // the deliveries in frames
	ctrlMax int
	dataMax int // bounds len(data) + items
	// maxFrame is the largest frame the connection's writer writes (set
	// by the writer, wire.DefaultMaxFrame until then).
	maxFrame int
	closed   bool

	ctrlReady chan struct{} // a token when ctrl became non-empty
	dataReady chan struct{} // a token when data or frames became non-empty
	done      chan struct{} // closed by close
	finish    chan struct{} // closed by finishing: drain, then end the streams
	finishing bool

	// open is the Deliver frame the matching loop is filling for this
	// connection; nil when it fills none. Only the loop touches it.
	open *deliverFrame
}

func newSendQueue(ctrlMax, dataMax int) *sendQueue {
	return &sendQueue{
		ctrlMax:   ctrlMax,
		dataMax:   dataMax,
		maxFrame:  wire.DefaultMaxFrame,
		ctrlReady: make(chan struct{}, 1),
		dataReady: make(chan struct{}, 1),
		done:      make(chan struct{}),
		finish:    make(chan struct{}),
	}
}

// pushControl queues an encoded frame; false means the queue is full or
// closed.
func (q *sendQueue) pushControl(frame []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.ctrl) >= q.ctrlMax {
		return false
	}
	q.ctrl = append(q.ctrl, frame)
	signal(q.ctrlReady)
	return true
}

// pushData queues deliveries, in order, all or none; false means they do
// not all fit (the connection is a slow consumer) or the queue is closed.
func (q *sendQueue) pushData(ds []delivery) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.data)+q.items+len(ds) > q.dataMax {
		return false
	}
	q.data = append(q.data, ds...)
	signal(q.dataReady)
	return true
}

// takeControl moves out every queued control frame, reusing buf.
func (q *sendQueue) takeControl(buf [][]byte) [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := append(buf[:0], q.ctrl...)
	clear(q.ctrl)
	q.ctrl = q.ctrl[:0]
	return out
}

// takeData swaps out the queued deliveries for the emptied buf.
func (q *sendQueue) takeData(buf []delivery) []delivery {
	clear(buf)
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.data
	q.data = buf[:0]
	return out
}

// isClosed reports whether the queue was closed (its connection is gone).
func (q *sendQueue) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// pending returns the number of queued control frames and deliveries.
func (q *sendQueue) pending() (ctrl, data int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ctrl), len(q.data) + q.items
}

// finishing asks the writers to write what is queued, end their streams
// and stop (graceful shutdown); pushes still succeed until close.
func (q *sendQueue) startFinish() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.finishing {
		q.finishing = true
		close(q.finish)
	}
}

// close makes further pushes fail and wakes the writers to exit.
func (q *sendQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.done)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
