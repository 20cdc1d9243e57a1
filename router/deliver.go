package router

import (
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
)

// The matching loop's delivery side: what a step routes to a connection
// is staged there and queued on the connection's data lane at the end of
// the step (or earlier, see stageMax): one lock and one writer wake-up per
// connection and batch, not per event. Deliveries to a client are encoded
// at once into the Deliver frame the loop is filling for it
// (deliverFrame), so the writer only writes finished frames; a router
// link's are staged as deliveries (conn.staged), framed by its writer.

// deliver encodes an event for client connection c, in items of at most
// wire.MaxSubsPerItem subscription ids, into the frame the loop is filling
// for c. A frame that is full is queued at once.
func (l *matchLoop) deliver(c *conn, subs []uint64, raw []byte, at time.Time) {
	for len(subs) > 0 {
		n := min(len(subs), wire.MaxSubsPerItem)
		f := l.openFrame(c)
		if !f.fits(subs[:n], raw) {
			l.push(c)
			if l.conns[c.id] != c {
				return // closed as a slow consumer
			}
			f = c.q.freshFrame() // not reopen: the item does not fit the tail
			c.q.open = f
		}
		f.add(subs[:n], raw, at)
		if f.len() >= stageMax {
			l.push(c)
		}
		subs = subs[n:]
	}
}

// openFrame returns the frame the loop is filling for c, noting c among
// the connections with something staged in this step.
func (l *matchLoop) openFrame(c *conn) *deliverFrame {
	if c.q.open == nil {
		if len(c.staged) == 0 {
			l.staged = append(l.staged, c)
		}
		c.q.open = c.q.reopen()
	}
	return c.q.open
}

// stage adds d to router link c's deliveries of this step. A share that
// reaches stageMax is queued at once, so a large batch does not hold back
// the connection's writer.
func (l *matchLoop) stage(c *conn, d delivery) {
	if len(c.staged) == 0 && c.q.open == nil {
		l.staged = append(l.staged, c)
	}
	c.staged = append(c.staged, d)
	if len(c.staged) >= stageMax {
		l.push(c)
	}
}

const stageMax = 1024

// flush queues what every connection has staged (see push).
func (l *matchLoop) flush() {
	for _, c := range l.staged {
		l.push(c)
	}
	clear(l.staged)
	l.staged = l.staged[:0]
}

// push queues what c has staged on its data lane, in the order it was
// staged. A connection whose queue cannot take it all is closed as a slow
// consumer; one detached during the step gets nothing.
func (l *matchLoop) push(c *conn) {
	attached := l.conns[c.id] == c
	if items := c.staged; len(items) > 0 {
		switch {
		case !attached:
		case !c.q.pushData(items):
			l.slowConsumer(c)
			attached = false
		case c.linkOut != nil:
			c.linkOut.Add(float64(len(items)))
		}
		clear(items)
		c.staged = items[:0]
	}
	if f := c.q.open; f != nil {
		c.q.open = nil
		l.pushFrame(c, f, attached)
	}
}

// pushFrame queues the Deliver frame the loop filled for c.
func (l *matchLoop) pushFrame(c *conn, f *deliverFrame, attached bool) {
	switch {
	case !attached || f.len() == 0:
		putDeliverFrame(f)
	case !c.q.pushFrame(f):
		l.slowConsumer(c)
	}
}
