package router

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
)

// errFinished ends a writer lane that wrote everything queued and closed
// its stream, on graceful shutdown.
var errFinished = errors.New("writer finished")

// connWriter drains a connection's sendQueue onto its streams: one
// goroutine per stream, so a data stream stalled by flow control never
// delays acks and errors on the control stream. It is the only writer of
// both streams once the handshake is over.
type connWriter struct {
	q        *sendQueue
	maxFrame int
	metrics  *Metrics
	cm       *connMetrics
}

// runControl writes queued control frames until the queue closes or a
// write fails.
func (w *connWriter) runControl(s io.WriteCloser) error {
	var frames [][]byte
	var buf []byte
	for finished := false; ; {
		select {
		case <-w.q.ctrlReady:
		case <-w.q.done:
			return nil
		case <-w.q.finish:
			finished = true
		}
		frames = w.q.takeControl(frames)
		buf = buf[:0]
		for _, f := range frames {
			buf = append(buf, f...)
		}
		if _, err := s.Write(buf); err != nil {
			return fmt.Errorf("control stream: %w", err)
		}
		w.cm.framesOut.Add(float64(len(frames)))
		w.cm.bytesOut.Add(float64(len(buf)))
		if finished {
			s.Close()
			return errFinished
		}
	}
}

// runData writes queued deliveries as Deliver frames, as many items per
// frame as fit, until the queue closes or a write fails.
func (w *connWriter) runData(s io.WriteCloser) error {
	var items []delivery
	var batch wire.DeliverBatch
	for finished := false; ; {
		select {
		case <-w.q.dataReady:
		case <-w.q.done:
			return nil
		case <-w.q.finish:
			finished = true
		}
		items = w.q.takeData(items)
		for start := 0; start < len(items); {
			end := w.fill(&batch, items[start:]) + start
			frame := batch.Frame()
			if _, err := s.Write(frame); err != nil {
				return fmt.Errorf("data stream: %w", err)
			}
			w.account(items[start:end], len(frame))
			start = end
		}
		clear(items) // written: an idle writer must not keep their frames alive
		if finished {
			s.Close()
			return errFinished
		}
	}
}

// fill resets batch and adds items while the frame stays under the
// maximum (always at least one item), returning how many it took.
func (w *connWriter) fill(batch *wire.DeliverBatch, items []delivery) int {
	batch.Reset()
	limit := w.maxFrame - 64
	for i, d := range items {
		if i > 0 && batch.Size()+len(d.raw)+10*len(d.subs)+10 > limit {
			return i
		}
		batch.Add(d.subs, d.raw)
	}
	return len(items)
}

// account counts written deliveries and observes their latency, once per
// run of deliveries from the same publish frame (one read time).
func (w *connWriter) account(items []delivery, bytes int) {
	now := time.Now()
	for i := 0; i < len(items); {
		at, j := items[i].at, i+1
		for j < len(items) && items[j].at.Equal(at) {
			j++
		}
		w.metrics.latency.observeN(now.Sub(at).Seconds(), uint64(j-i))
		i = j
	}
	w.metrics.EventsOut.Add(float64(len(items)))
	w.cm.framesOut.Inc()
	w.cm.bytesOut.Add(float64(bytes))
}
