package router

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/sift-pubsub/sift/internal/wire"
)

// linkWriter returns the writer lane of a link's data stream for the
// router's forwarding mode.
func (r *Router) linkWriter(w *connWriter) func(io.WriteCloser) error {
	if r.cfg.Forward == ForwardBloom {
		return w.runBloomForward
	}
	return w.runForward
}

// runBloomForward writes the entries queued for a neighbour router (each
// delivery's raw is a BloomPublish entry, its witness the one to carry, 0
// for none) as BloomPublish frames.
func (w *connWriter) runBloomForward(s io.WriteCloser) error {
	return w.runLink(s, &bloomFrame{})
}

// runForward writes the events queued for a neighbour router, with their
// witnesses, as LinkPublish frames. The sequence numbers only number the
// frames: links do not acknowledge events.
func (w *connWriter) runForward(s io.WriteCloser) error {
	return w.runLink(s, &linkPublishFrame{})
}

// linkFrame builds one data frame for a neighbour router from queued raw
// items: wire.LinkPublishBatch (exact mode) or wire.BloomBatch (Bloom
// mode).
type linkFrame interface {
	Reset()
	Size() int
	add(d *delivery)
	// frame returns the batch as frame number seq, valid until the next
	// call or Reset.
	frame(seq uint64) []byte
}

type linkPublishFrame struct{ wire.LinkPublishBatch }

func (f *linkPublishFrame) add(d *delivery) { f.AddRaw(d.raw, d.witness) }

func (f *linkPublishFrame) frame(seq uint64) []byte { return f.Frame(seq) } // in place

type bloomFrame struct {
	wire.BloomBatch
	buf []byte
}

func (f *bloomFrame) add(d *delivery) { f.AddEntry(d.raw, d.witness) }

func (f *bloomFrame) frame(seq uint64) []byte {
	f.buf = f.AppendFrame(f.buf[:0], seq)
	return f.buf
}

// linkItemSlack bounds what a link frame adds to an item's raw bytes: a
// length prefix (BloomPublish) or a witness (LinkPublish).
const linkItemSlack = binary.MaxVarintLen64 + 8

// runLink writes what is queued for a neighbour router on the link's data
// stream, as many items per frame as fit, until the queue closes or a
// write fails.
func (w *connWriter) runLink(s io.WriteCloser, batch linkFrame) error {
	var items []delivery
	var seq uint64
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
			batch.Reset()
			end := start
			for ; end < len(items); end++ {
				if end > start && batch.Size()+len(items[end].raw)+linkItemSlack > w.maxFrame-frameSlack {
					break
				}
				batch.add(&items[end])
			}
			seq++
			frame := batch.frame(seq)
			if _, err := s.Write(frame); err != nil {
				return fmt.Errorf("link data stream: %w", err)
			}
			w.cm.framesOut.Inc()
			w.cm.bytesOut.Add(float64(len(frame)))
			start = end
		}
		clear(items) // written: an idle writer must not keep their frames alive
		if finished {
			s.Close()
			return errFinished
		}
	}
}
