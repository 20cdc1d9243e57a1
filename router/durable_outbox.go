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

// outbox is one link's durable frames not yet on its lane, encoded
// straight into the lane entries they will go in: each message is encoded
// once, into the entry being filled, not into a frame of its own copied
// into an entry at the flush.
type outbox struct {
	c       *conn
	entries []outEntry   // in order; only the last one is still filled
	frames  int          // the frames in entries
	hint    int          // the capacity a new entry starts with (open)
	enc     wire.Durable // the message being encoded (not one allocated per message)
	warned  bool         // a drop was logged since the outbox last drained
}

// outEntry is one lane entry in the making: n frames, one after the other.
type outEntry struct {
	buf []byte
	n   int
}

// entryStart is the least capacity a new lane entry starts with, and
// entrySlack the room left above the size of the entry before it (see
// outbox.open).
const (
	entryStart = 1 << 10
	entrySlack = 4 << 10
)

// queueLink queues a message for the neighbour's lane (driver goroutine).
func (d *durableNode) queueLink(l *durableLink, m durable.Msg) {
	if ob := d.outboxFor(l); ob != nil {
		ob.enc.Msg = m
		ob.add(&ob.enc, nil)
		ob.enc.Msg = durable.Msg{} // keep nothing of it
	}
}

// queueFrame queues an encoded frame for the neighbour's lane (driver
// goroutine).
func (d *durableNode) queueFrame(l *durableLink, frame []byte) {
	if ob := d.outboxFor(l); ob != nil {
		ob.add(nil, frame)
	}
}

// outboxFor returns the outbox of l's connection, or nil (the message
// dropped, counted and logged) when it is full.
func (d *durableNode) outboxFor(l *durableLink) *outbox {
	ob := d.outboxes[l.peer]
	if ob == nil || ob.c != l.c {
		ob = &outbox{c: l.c} // a new connection: what was queued for the old one is moot
		d.outboxes[l.peer] = ob
	}
	if ob.frames >= maxOutbox {
		d.met.linkDropped.Inc()
		if !ob.warned {
			ob.warned = true
			d.log.Warn("durable link outbox full: dropping messages until the neighbour reads", "peer", l.peer, "frames", ob.frames)
		}
		return nil
	}
	d.met.linkOut.Inc()
	return ob
}

// add encodes m (or copies frame, already encoded, when m is nil) at the
// end of the entry being filled, or of a new one when that one holds
// maxEntryFrames frames or would pass maxEntryBytes (a frame larger than
// that goes alone).
func (ob *outbox) add(m wire.Message, frame []byte) {
	k := len(ob.entries) - 1
	if k < 0 || ob.entries[k].n >= maxEntryFrames || len(ob.entries[k].buf) >= maxEntryBytes {
		ob.open(len(frame))
		k++
	}
	e := &ob.entries[k]
	at := len(e.buf)
	if m != nil {
		e.buf = wire.AppendFrame(e.buf, m)
	} else {
		e.buf = append(e.buf, frame...)
	}
	ob.frames++
	if e.n == 0 || len(e.buf) <= maxEntryBytes {
		e.n++
		return
	}
	// It does not fit: it starts the next entry.
	f := e.buf[at:]
	e.buf = e.buf[:at]
	ob.open(len(f))
	next := &ob.entries[k+1]
	next.buf, next.n = append(next.buf, f...), 1
}

// open starts a new entry, with room for a frame of n bytes and for as
// many bytes as the entry before it took (entries of a busy link are
// alike: mostly full), so that filling it seldom grows it.
func (ob *outbox) open(n int) {
	if k := len(ob.entries) - 1; k >= 0 {
		ob.hint = entryHint(len(ob.entries[k].buf))
	}
	ob.entries = append(ob.entries, outEntry{buf: make([]byte, 0, max(entryStart, ob.hint, n))})
}

// entryHint is the capacity to start an entry with after one of n bytes.
func entryHint(n int) int { return min(n, maxEntryBytes) + entrySlack }

// flushLinks moves queued entries onto the links' lanes while they take
// them (driver goroutine). The entry being filled goes too: later frames
// start a new one. An outbox emptied stays (its hint sizes the next
// entries) until its connection closes.
func (d *durableNode) flushLinks() {
	for peer, ob := range d.outboxes {
		sent := 0
		for _, e := range ob.entries {
			if !ob.c.q.pushControl(e.buf) {
				break // the lane is full: the rest waits for the next flush
			}
			ob.frames -= e.n
			ob.hint = entryHint(len(e.buf))
			sent++
		}
		clear(ob.entries[:sent])
		ob.entries = ob.entries[sent:]
		if len(ob.entries) == 0 && ob.c.q.isClosed() {
			delete(d.outboxes, peer) // kept while its connection lives, for its hint
		}
	}
}

// outboxFrames returns the frames waiting in every outbox.
func (d *durableNode) outboxFrames() int {
	n := 0
	for _, ob := range d.outboxes {
		n += ob.frames
	}
	return n
}
