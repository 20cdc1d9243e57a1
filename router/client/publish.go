package client

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// publisher batches events onto the data stream and tracks the router's
// acknowledgements.
type publisher struct {
	c     *Client
	mu    sync.Mutex // the batch, seq and data stream writes
	batch wire.PublishBatch
	// dict is the batch on a connection of wire.VersionPublishDict or
	// later: PublishDict frames, each name written once per frame
	// (PublishCompact frames from wire.VersionCompact: string values and
	// decimals compact too).
	dict      wire.DictBatch
	useDict   bool
	seq       uint64
	event     []byte        // the event being added, encoded (Publish frames)
	maxBytes  int           // most event bytes per frame: BatchBytes within the router's limit
	inflight  chan struct{} // one token per unacknowledged batch
	lingering bool          // a linger timer will send the partial batch

	ackMu  sync.Mutex
	ackSeq uint64
	ackCh  chan struct{} // closed and replaced on every ack
	// sizes are the event counts of the batches sent and not yet
	// acknowledged, oldest first; accepted counts the events of the
	// acknowledged ones.
	sizes    []int
	accepted uint64
}

// Accepted returns how many published events the router has accepted
// (acknowledged) so far on this connection. An accepted event is routed
// to every matching subscription the router had, even if the connection
// fails afterwards; events published beyond Accepted may or may not have
// been routed.
func (c *Client) Accepted() uint64 {
	p := &c.pub
	p.ackMu.Lock()
	defer p.ackMu.Unlock()
	return p.accepted
}

func (p *publisher) init(c *Client) {
	p.c = c
	p.maxBytes = c.opts.BatchBytes
	if lim := int(c.welcome.MaxFrame) - wire.Overhead; c.welcome.MaxFrame > 0 && lim < p.maxBytes {
		p.maxBytes = lim
	}
	p.useDict = c.welcome.Version >= wire.VersionPublishDict
	p.dict.SetCompact(c.welcome.Version >= wire.VersionCompact)
	p.inflight = make(chan struct{}, c.opts.MaxInFlight)
	p.ackCh = make(chan struct{})
}

// Publish adds events to the current batch, sending each batch that fills
// up. It waits (until ctx ends) while MaxInFlight batches are
// unacknowledged. An event that cannot travel (a string that is not UTF-8,
// or larger than the router's frame limit) is an error, and the events
// before it stay in the batch.
func (c *Client) Publish(ctx context.Context, events ...match.Event) error {
	p := &c.pub
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.lingerLocked()
	for _, e := range events {
		if _, err := p.addLocked(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// publishOne is Publish of one event that also says whether the event
// joined the connection's stream of events (its batch), even when an
// error follows (a batch that could not be sent): Session keeps exactly
// the events that did, in order, to publish again those the router did
// not acknowledge.
func (c *Client) publishOne(ctx context.Context, e match.Event) (queued bool, err error) {
	p := &c.pub
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.lingerLocked()
	return p.addLocked(ctx, e)
}

// addLocked adds e to the batch, sending the batch before it if e does
// not fit and after it if it is full; queued says whether e is in the
// batch (or sent).
func (p *publisher) addLocked(ctx context.Context, e match.Event) (queued bool, err error) {
	if p.useDict {
		return p.addDictLocked(ctx, e)
	}
	if p.event, err = wire.AppendCheckedEvent(p.event[:0], e); err != nil {
		return false, fmt.Errorf("publish: %w", err)
	}
	if len(p.event) > p.maxBytes {
		return false, fmt.Errorf("publish: event of %d bytes exceeds the router's limit of %d", len(p.event), p.maxBytes)
	}
	if p.batch.Size()+len(p.event) > p.maxBytes {
		if err := p.sendLocked(ctx); err != nil {
			return false, err
		}
	}
	p.batch.AddRaw(p.event)
	if p.batch.Len() >= p.c.opts.BatchSize || p.batch.Size() >= p.maxBytes {
		if err := p.sendLocked(ctx); err != nil {
			return true, err
		}
	}
	return true, nil
}

// addDictLocked is addLocked into a PublishDict batch: the event is
// checked and encoded straight into it, and taken back when it does not
// fit (the next batch's dictionary is empty, so there it is encoded
// again). The router's limit counts the events' plain encoding, so a
// batch holds as many events as a Publish batch would.
func (p *publisher) addDictLocked(ctx context.Context, e match.Event) (queued bool, err error) {
	n, err := p.dict.AddChecked(e)
	if err != nil {
		return false, fmt.Errorf("publish: %w", err)
	}
	if n > p.maxBytes {
		p.dict.Undo()
		return false, fmt.Errorf("publish: event of %d bytes exceeds the router's limit of %d", n, p.maxBytes)
	}
	if p.dict.Size() > p.maxBytes {
		p.dict.Undo()
		if err := p.sendLocked(ctx); err != nil {
			return false, err
		}
		if _, err := p.dict.AddChecked(e); err != nil { // checked above: it cannot fail
			return false, fmt.Errorf("publish: %w", err)
		}
	}
	if p.dict.Len() >= p.c.opts.BatchSize || p.dict.Size() >= p.maxBytes {
		if err := p.sendLocked(ctx); err != nil {
			return true, err
		}
	}
	return true, nil
}

// pending is the number of events in the batch.
func (p *publisher) pending() int {
	if p.useDict {
		return p.dict.Len()
	}
	return p.batch.Len()
}

// frame returns the batch as the frame numbered seq and empties the
// batch for the next events once the frame is written (done).
func (p *publisher) frame(seq uint64) (frame []byte, done func()) {
	if p.useDict {
		return p.dict.Frame(seq), p.dict.Reset
	}
	return p.batch.Frame(seq), p.batch.Reset
}

// lingerLocked arms the linger timer when a partial batch is left.
func (p *publisher) lingerLocked() {
	if p.pending() > 0 && !p.lingering && p.c.opts.Linger > 0 {
		p.lingering = true
		time.AfterFunc(p.c.opts.Linger, p.linger)
	}
}

// linger sends the partial batch Options.Linger after a Publish left
// one. A failure is the connection's: the next Publish or Flush reports
// it.
func (p *publisher) linger() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lingering = false
	if p.pending() > 0 {
		p.sendLocked(context.Background())
	}
}

// Flush sends the partial batch and waits until the router has accepted
// every event published so far.
func (c *Client) Flush(ctx context.Context) error {
	p := &c.pub
	p.mu.Lock()
	if p.pending() > 0 {
		if err := p.sendLocked(ctx); err != nil {
			p.mu.Unlock()
			return err
		}
	}
	target := p.seq
	p.mu.Unlock()
	for {
		p.ackMu.Lock()
		done, ch := p.ackSeq >= target, p.ackCh
		p.ackMu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("flush: %w", ctx.Err())
		case <-c.done:
			return fmt.Errorf("flush: %w", c.err)
		}
	}
}

// sendLocked writes the batch as the next Publish frame once a window
// token is free.
func (p *publisher) sendLocked(ctx context.Context) error {
	select {
	case p.inflight <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("publish: %w", ctx.Err())
	case <-p.c.done:
		return fmt.Errorf("publish: %w", p.c.err)
	}
	p.seq++
	p.ackMu.Lock()
	p.sizes = append(p.sizes, p.pending())
	p.ackMu.Unlock()
	frame, done := p.frame(p.seq)
	_, err := p.c.data.Write(frame) // the frame is the batch's buffer
	done()
	if err != nil {
		if cerr := p.c.Err(); cerr != nil {
			err = cerr // why the connection ended, rather than the stream's echo of it
		}
		return fmt.Errorf("publish: %w", remoteError(err))
	}
	return nil
}

// acked records the router's acknowledgement of batch seq (acks arrive in
// order) and frees its window token.
func (p *publisher) acked(seq uint64) {
	p.ackMu.Lock()
	for ; p.ackSeq < seq && len(p.sizes) > 0; p.ackSeq++ {
		p.accepted += uint64(p.sizes[0])
		p.sizes = p.sizes[1:]
	}
	if seq > p.ackSeq {
		p.ackSeq = seq
	}
	close(p.ackCh)
	p.ackCh = make(chan struct{})
	p.ackMu.Unlock()
	select {
	case <-p.inflight:
	default:
	}
}
