package router

import (
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
)

// The matching loop's delivery side: deliveries are staged per connection
// during a step and queued on each connection's data lane at once.

// deliver stages an event for a connection, in items of at most
// wire.MaxSubsPerItem subscription ids.
func (l *matchLoop) deliver(c *conn, subs []uint64, raw []byte, at time.Time) {
	for len(subs) > 0 {
		n := min(len(subs), wire.MaxSubsPerItem)
		l.stage(c, delivery{subs: l.ids.copy(subs[:n]), raw: raw, at: at})
		subs = subs[n:]
	}
}

// stage adds d to c's deliveries of this step. A step routes a whole
// batch of events, and flush queues each connection's share at once: one
// lock and one writer wake-up per connection and batch, not per event. A
// share that reaches stageMax is queued at once, so a large batch does not
// hold back the connection's writer.
func (l *matchLoop) stage(c *conn, d delivery) {
	if len(c.staged) == 0 {
		l.staged = append(l.staged, c)
	}
	c.staged = append(c.staged, d)
	if len(c.staged) >= stageMax {
		l.push(c)
	}
}

const stageMax = 1024

// flush queues the staged deliveries of every connection (see push).
func (l *matchLoop) flush() {
	for _, c := range l.staged {
		if len(c.staged) > 0 {
			l.push(c)
		}
	}
	clear(l.staged)
	l.staged = l.staged[:0]
}

// push queues c's staged deliveries on its data lane, in the order they
// were staged. A connection whose queue cannot take them all is closed as
// a slow consumer; one detached during the step gets nothing.
func (l *matchLoop) push(c *conn) {
	items := c.staged
	switch {
	case l.conns[c.id] != c:
	case !c.q.pushData(items):
		l.slowConsumer(c)
	case c.linkOut != nil:
		c.linkOut.Add(float64(len(items)))
	}
	clear(items)
	c.staged = items[:0]
}

// idArena hands out copies of subscription id lists carved from large
// chunks: one allocation per idChunk ids instead of one per delivery. A
// chunk is never reused; it is garbage once its deliveries are written.
type idArena struct{ free []uint64 }

const idChunk = 4096

func (a *idArena) copy(ids []uint64) []uint64 {
	if len(ids) > len(a.free) {
		if len(ids) > idChunk/4 {
			return append([]uint64(nil), ids...)
		}
		a.free = make([]uint64, idChunk)
	}
	out := a.free[:len(ids):len(ids)]
	copy(out, ids)
	a.free = a.free[len(ids):]
	return out
}
