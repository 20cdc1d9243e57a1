package lossy

import (
	"sync"
	"time"
)

// maxQueued bounds the datagrams waiting in one direction of a relay
// without jitter; more are dropped, as netem drops beyond its limit.
const maxQueued = 4096

// line is one direction of a relay with a delay and no jitter: every
// datagram waits the same time, so the first in is the first due, and
// one goroutine sends them in the order they came. (A timer per datagram
// sends each from a goroutine of its own, in no set order: a burst would
// leave reordered.)
type line struct {
	q    chan queued
	done sync.WaitGroup
}

// queued is a datagram and when it is due to leave.
type queued struct {
	due time.Time
	d   []byte
}

// newLine starts the goroutine that sends each datagram pushed with send
// once it is due, or drops it once closed reports true.
func newLine(send func([]byte), closed func() bool) *line {
	l := &line{q: make(chan queued, maxQueued)}
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		for it := range l.q {
			if closed() {
				continue
			}
			time.Sleep(time.Until(it.due))
			if !closed() {
				send(it.d)
			}
		}
	}()
	return l
}

// push queues d to leave at due; it reports false when the line is full.
func (l *line) push(due time.Time, d []byte) bool {
	select {
	case l.q <- queued{due: due, d: d}:
		return true
	default:
		return false
	}
}

// stop ends the line, once nothing pushes to it any more, and waits for
// its goroutine.
func (l *line) stop() {
	close(l.q)
	l.done.Wait()
}
