package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sift-pubsub/sift/router/client"
)

// Detached streams: a plain SSE stream over HTTP/1 is taken over from
// net/http (Hijack) once its headers are written, so that an idle stream
// costs its socket and a few small structures, not a handler goroutine, a
// background reader and their buffers. Deliveries schedule the stream on
// a small pool of writer goroutines (writeQueue); one heartbeat loop walks
// every stream. A client that went away is noticed by the next write
// failing (within one heartbeat period when idle). HTTP/2 streams, and
// durable ones, keep a goroutine each (serveSSE, streamDurable).

// detachedStream is one taken-over SSE connection.
type detachedStream struct {
	conn   net.Conn
	sk     *sink
	pc     *poolConn
	sub    *client.Subscription
	queued atomic.Bool // on the write queue
	beat   atomic.Bool // a heartbeat is due
	closed atomic.Bool
}

// writeTimeout bounds one write to a detached stream: a peer that reads
// nothing for this long is a slow consumer.
const writeTimeout = 10 * time.Second

// writers is the gateway's pool of detached-stream writers.
type writers struct {
	once    sync.Once
	q       chan *detachedStream
	streams sync.Map // *detachedStream -> struct{}
}

// detach takes the stream over when it is HTTP/1 and says whether it did.
// It writes the response head itself (the connection closes at the end of
// the stream, so the body needs no chunking) and the ": subscribed"
// comment.
func (g *Gateway) detach(w http.ResponseWriter, r *http.Request, sk *sink, pc *poolConn, sub *client.Subscription) bool {
	hj, ok := w.(http.Hijacker)
	if !ok || r.ProtoMajor != 1 {
		return false
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Connection", "close")
	bw := bufio.NewWriterSize(conn, 512)
	bw.WriteString("HTTP/1.1 200 OK\r\n")
	h.Write(bw)
	bw.WriteString("\r\n: subscribed\n\n")
	conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if rw.Writer.Buffered() > 0 {
		rw.Writer.Flush()
	}
	if err := bw.Flush(); err != nil {
		conn.Close()
		pc.unsubscribe(&g.pool, sub)
		return true
	}
	ds := &detachedStream{conn: conn, sk: sk, pc: pc, sub: sub}
	g.wr.start(g)
	g.wr.streams.Store(ds, struct{}{})
	g.stats.subscribers.Add(1)
	notify := func() { g.wr.schedule(ds) }
	sk.notify.Store(&notify)
	g.wr.schedule(ds) // deliveries that came meanwhile
	return true
}

// start starts the writers and the heartbeat loop, once.
func (wr *writers) start(g *Gateway) {
	wr.once.Do(func() {
		wr.q = make(chan *detachedStream, 1<<16)
		for range 16 {
			go wr.run(g)
		}
		go wr.heartbeats(g)
	})
}

// schedule puts ds on the write queue unless it is there already.
func (wr *writers) schedule(ds *detachedStream) {
	if ds.closed.Load() || !ds.queued.CompareAndSwap(false, true) {
		return
	}
	select {
	case wr.q <- ds:
	default:
		go func() { wr.q <- ds }() // a full queue must not block a delivery
	}
}

// coalesce is how long a writer waits, after the first stream of a round
// was scheduled, before it writes: deliveries that arrive meanwhile (a
// publish batch fans out over many streams, several events each) share
// one write per stream instead of one each.
const coalesce = time.Millisecond

// run writes what scheduled streams hold, in rounds, until the gateway
// closes.
func (wr *writers) run(g *Gateway) {
	var buf [][]byte
	var out []byte
	var round []*detachedStream
	for {
		select {
		case ds := <-wr.q:
			round = append(round[:0], ds)
		case <-g.ctx.Done():
			return
		}
		time.Sleep(coalesce)
	more:
		for len(round) < 1024 {
			select {
			case ds := <-wr.q:
				round = append(round, ds)
			default:
				break more
			}
		}
		for i, ds := range round {
			buf, out = wr.write(g, ds, buf, out)
			round[i] = nil
		}
		if cap(out) > 64<<10 {
			out = nil // do not keep a burst's buffer
		}
	}
}

// write writes what ds holds (and a due heartbeat, or its last message).
func (wr *writers) write(g *Gateway, ds *detachedStream, buf [][]byte, out []byte) ([][]byte, []byte) {
	ds.queued.Store(false)
	if ds.closed.Load() {
		return buf, out
	}
	msgs, over, ended := ds.sk.take(buf)
	out = out[:0]
	for _, m := range msgs {
		out = append(out, m...)
	}
	if ds.beat.Swap(false) && len(msgs) == 0 {
		out = append(out, heartbeat...)
	}
	switch {
	case over:
		g.stats.slow.Add(1)
		out = append(out, errorMessage("slow consumer: more than the gateway's buffer of events were waiting for this stream; reconnect (a durable subscription misses nothing)")...)
	case ended != nil:
		out = append(out, errorMessage("subscription ended: "+ended.Error())...)
	}
	n := len(msgs)
	clear(msgs)
	if len(out) > 0 {
		ds.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := ds.conn.Write(out); err != nil {
			over = true // gone, or too slow to read
		} else {
			g.stats.delivered.Add(uint64(n))
		}
	}
	if over || ended != nil {
		wr.end(g, ds)
	}
	return msgs[:0], out
}

// end closes a detached stream and removes its subscription.
func (wr *writers) end(g *Gateway, ds *detachedStream) {
	if !ds.closed.CompareAndSwap(false, true) {
		return
	}
	wr.streams.Delete(ds)
	ds.conn.Close()
	g.stats.subscribers.Add(-1)
	go ds.pc.unsubscribe(&g.pool, ds.sub)
}

// heartbeats schedules a comment on every stream each heartbeat period,
// and ends every stream when the gateway closes.
func (wr *writers) heartbeats(g *Gateway) {
	t := time.NewTicker(g.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			wr.streams.Range(func(k, _ any) bool {
				ds := k.(*detachedStream)
				ds.beat.Store(true)
				wr.schedule(ds)
				return true
			})
		case <-g.ctx.Done():
			wr.streams.Range(func(k, _ any) bool {
				ds := k.(*detachedStream)
				if ds.closed.CompareAndSwap(false, true) {
					ds.conn.Close()
					g.stats.subscribers.Add(-1)
				}
				wr.streams.Delete(ds)
				return true
			})
			return
		}
	}
}
