package router

import (
	"errors"
	"fmt"
	"io"
	"time"
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

// runData writes the Deliver frames the loop queued, as they are, until
// the queue closes or a write fails, and puts them back in the pool.
func (w *connWriter) runData(s io.WriteCloser) error {
	w.q.setMaxFrame(w.maxFrame)
	var frames []*deliverFrame
	for finished := false; ; {
		select {
		case <-w.q.dataReady:
		case <-w.q.done:
			return nil
		case <-w.q.finish:
			finished = true
		}
		frames = w.q.takeFrames(frames)
		for _, f := range frames {
			frame := f.batch.Frame()
			if _, err := s.Write(frame); err != nil {
				return fmt.Errorf("data stream: %w", err)
			}
			w.account(f, len(frame))
			putDeliverFrame(f)
		}
		clear(frames)
		if finished {
			s.Close()
			return errFinished
		}
	}
}

// account counts a written frame's deliveries and observes their
// latency, once per run of items from the same publish frame (one read
// time).
func (w *connWriter) account(f *deliverFrame, bytes int) {
	now := time.Now()
	for _, r := range f.runs {
		w.metrics.latency.observeN(now.Sub(r.at).Seconds(), uint64(r.n))
	}
	w.metrics.EventsOut.Add(float64(f.len()))
	w.cm.framesOut.Inc()
	w.cm.bytesOut.Add(float64(bytes))
}
