package httpapi

import (
	"sync"
	"sync/atomic"
)

// sink is one SSE subscriber's queue of encoded messages, filled by a
// connection's reader (or a durable session) without blocking and
// drained by the subscriber's HTTP handler. It holds at most max
// messages: one more marks the subscriber as a slow consumer, and the
// handler then ends the stream.
type sink struct {
	mu    sync.Mutex
	queue [][]byte
	max   int
	over  bool
	ended error         // the subscription ended at the router (nil: it runs)
	wake  chan struct{} // a token when queue, over or ended changed
	ce    bool          // the subscriber wants structured CloudEvents
	// notify, if set, replaces wake: a detached stream's writer is
	// scheduled instead of a goroutine woken (detached.go).
	notify atomic.Pointer[func()]
}

func newSink(max int) *sink { return &sink{max: max, wake: make(chan struct{}, 1)} }

// push queues msg, or marks the sink slow when it is full.
func (s *sink) push(msg []byte) {
	s.mu.Lock()
	switch {
	case s.over:
	case len(s.queue) >= s.max:
		s.over = true
		s.queue = nil
	default:
		s.queue = append(s.queue, msg)
	}
	s.mu.Unlock()
	s.signal()
}

// end records why the subscription ended at the router side.
func (s *sink) end(err error) {
	s.mu.Lock()
	if s.ended == nil {
		s.ended = err
	}
	s.mu.Unlock()
	s.signal()
}

func (s *sink) signal() {
	if f := s.notify.Load(); f != nil {
		(*f)()
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take moves out the queued messages (reusing buf) and says whether the
// sink overflowed or its subscription ended.
func (s *sink) take(buf [][]byte) (msgs [][]byte, over bool, ended error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs = append(buf[:0], s.queue...)
	clear(s.queue)
	s.queue = s.queue[:0]
	return msgs, s.over, s.ended
}
