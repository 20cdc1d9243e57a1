package router

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
)

// signalWriter reports each write on a channel.
type signalWriter struct{ wrote chan int }

func (w signalWriter) Write(p []byte) (int, error) { w.wrote <- len(p); return len(p), nil }
func (w signalWriter) Close() error                { return nil }

// TestWriterDropsWrittenDeliveries: once a writer has written what was
// queued and waits for more, nothing it holds points into a Publish frame:
// a link's deliveries alias whole Publish frames, which an idle connection
// would otherwise keep alive until its next delivery, and a client's
// Deliver frames (written, then pooled) must hold copies.
func TestWriterDropsWrittenDeliveries(t *testing.T) {
	for _, lane := range []string{"data", "link"} {
		t.Run(lane, func(t *testing.T) {
			m := NewMetrics(prometheus.NewRegistry())
			q := newSendQueue(16, 16)
			w := &connWriter{q: q, maxFrame: 1 << 20, metrics: m, cm: m.forConn("1", lane)}
			out := signalWriter{wrote: make(chan int, 1)}
			done := make(chan error, 1)
			go func() {
				if lane == "data" {
					done <- w.runData(out)
				} else {
					done <- w.runLink(out, &linkPublishFrame{})
				}
			}()
			body := make([]byte, 64<<10) // stands for a Publish frame's body
			body[0], body[1] = 0, 0      // an empty event: attribute count 0
			gone := weak.Make(&body[0])
			if !queueOne(q, lane, body[:1]) {
				t.Fatal("queue refused")
			}
			body = nil
			<-out.wrote
			deadline := time.Now().Add(2 * time.Second)
			for gone.Value() != nil && time.Now().Before(deadline) {
				runtime.GC()
				time.Sleep(10 * time.Millisecond)
			}
			q.close()
			<-done
			if gone.Value() != nil {
				t.Fatal("an idle writer keeps the frame of a delivery it has written")
			}
		})
	}
}

// queueOne queues raw as a client's Deliver frame (data) or as a link's
// delivery (link), as the matching loop does.
func queueOne(q *sendQueue, lane string, raw []byte) bool {
	if lane == "link" {
		return q.pushData([]delivery{{raw: raw}})
	}
	f := q.reopen()
	f.add([]uint64{1}, raw, time.Now())
	return q.pushFrame(f)
}
