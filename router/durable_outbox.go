package router

import (
	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
)

// Durable messages to a neighbour go through an outbox, so that a full
// link lane holds them back instead of losing them: the driver queues
// each encoded frame on the link's outbox, and flushLinks moves what the
// lane takes, several frames per lane entry, after every batch of inputs
// and every timer. A lane that stays full (a neighbour not reading) fills
// the outbox up to maxOutbox frames; beyond that messages are dropped,
// counted in sift_durable_link_messages_dropped_total and logged (the
// protocol asks again once the link drains), so a dead neighbour cannot
// exhaust memory.
const (
	maxOutbox      = 1 << 18 // frames held per link
	maxEntryFrames = 256     // frames per lane entry
	maxEntryBytes  = 1 << 16 // bytes per lane entry (a frame larger than this goes alone)
)

// outbox is one link's durable frames not yet on its lane.
type outbox struct {
	c      *conn
	frames [][]byte
	warned bool // a drop was logged since the outbox last drained
}

// queueLink queues a message for the neighbour's lane (driver goroutine).
func (d *durableNode) queueLink(l *durableLink, m durable.Msg) {
	d.queueFrame(l, wire.AppendFrame(nil, &wire.Durable{Msg: m}))
}

// queueFrame queues an encoded frame for the neighbour's lane (driver
// goroutine).
func (d *durableNode) queueFrame(l *durableLink, frame []byte) {
	ob := d.outboxes[l.peer]
	if ob == nil || ob.c != l.c {
		ob = &outbox{c: l.c} // a new connection: what was queued for the old one is moot
		d.outboxes[l.peer] = ob
	}
	if len(ob.frames) >= maxOutbox {
		d.met.linkDropped.Inc()
		if !ob.warned {
			ob.warned = true
			d.log.Warn("durable link outbox full: dropping messages until the neighbour reads", "peer", l.peer, "frames", len(ob.frames))
		}
		return
	}
	d.met.linkOut.Inc()
	ob.frames = append(ob.frames, frame)
}

// flushLinks moves queued frames onto the links' lanes while they take
// them, packing several frames into each lane entry (driver goroutine).
func (d *durableNode) flushLinks() {
	for peer, ob := range d.outboxes {
		for len(ob.frames) > 0 {
			n, size := 0, 0
			for n < len(ob.frames) && n < maxEntryFrames && (n == 0 || size+len(ob.frames[n]) <= maxEntryBytes) {
				size += len(ob.frames[n])
				n++
			}
			entry := ob.frames[0]
			if n > 1 {
				entry = make([]byte, 0, size)
				for _, f := range ob.frames[:n] {
					entry = append(entry, f...)
				}
			}
			if !ob.c.q.pushControl(entry) {
				break // the lane is full: the rest waits for the next flush
			}
			clear(ob.frames[:n])
			ob.frames = ob.frames[n:]
		}
		if len(ob.frames) == 0 {
			delete(d.outboxes, peer)
		}
	}
}

// outboxFrames returns the frames waiting in every outbox.
func (d *durableNode) outboxFrames() int {
	n := 0
	for _, ob := range d.outboxes {
		n += len(ob.frames)
	}
	return n
}
