package router

import (
	"sync"
	"time"
)

// delivery is one event queued for one connection: the ids of the
// connection's subscriptions it matched, the event's wire encoding, and
// when its publish frame was read (for the latency histogram). On a link
// in exact mode, witness names a filter of the link's that the event
// matched (linkwitness.go; 0: none), and subs is unused.
type delivery struct {
	subs    []uint64
	raw     []byte
	at      time.Time
	witness uint64
}

// sendQueue is a connection's bounded outbound queue, filled by the
// matching loop without ever blocking and drained by the connection's
// writer. Control frames and deliveries queue separately, so control never
// waits behind data.
type sendQueue struct {
	mu      sync.Mutex
	ctrl    [][]byte
	data    []delivery
	ctrlMax int
	dataMax int
	closed  bool

	ctrlReady chan struct{} // a token when ctrl became non-empty
	dataReady chan struct{} // a token when data became non-empty
	done      chan struct{} // closed by close
	finish    chan struct{} // closed by finishing: drain, then end the streams
	finishing bool
}

func newSendQueue(ctrlMax, dataMax int) *sendQueue {
	return &sendQueue{
		ctrlMax:   ctrlMax,
		dataMax:   dataMax,
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
	if q.closed || len(q.data)+len(ds) > q.dataMax {
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

// pending returns the number of queued control frames and deliveries.
func (q *sendQueue) pending() (ctrl, data int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ctrl), len(q.data)
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
