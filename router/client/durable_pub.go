package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/replica"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// durablePub is a DurablePublisher's state: the events not yet
// acknowledged (sequence numbers acked+1 .. last), and the goroutine that
// keeps a connection and sends them.
type durablePub struct {
	id, pubend string
	o          DurablePublisherOptions

	mu      sync.Mutex
	queue   []match.Event // events acked+1 .. last
	acked   uint64
	last    uint64
	err     error         // terminal
	changed chan struct{} // closed and replaced whenever acked or err changes
	wake    chan struct{} // a token when the queue grew
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newDurablePublisher(ctx context.Context, opts DurablePublisherOptions) (*DurablePublisher, error) {
	var err error
	if opts.DurableOptions, err = opts.DurableOptions.withDefaults(); err != nil {
		return nil, err
	}
	if opts.Window <= 0 {
		opts.Window = 4096
	}
	if opts.ID == "" {
		var b [16]byte
		rand.Read(b[:])
		opts.ID = hex.EncodeToString(b[:])
	}
	p := &durablePub{id: opts.ID, pubend: opts.Pubend, o: opts, changed: make(chan struct{}),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	d := newDialer(opts.DurableOptions)
	c, err := d.dial(ctx, p.stop, p.hello, isRefusal)
	if err != nil {
		return nil, fmt.Errorf("durable publisher: %w", err)
	}
	d.connected()
	go p.run(c, d)
	return &DurablePublisher{dp: p}, nil
}

// A connection the router closed as forbidden (siftd --permissions) is a
// refusal too: retrying cannot help. A router that holds a replica of a
// replicated pubend but does not lead it refuses too, but then the next
// router of DurableOptions.Routers may lead it: that one is tried.
func isRefusal(err error) bool {
	var pe *wire.ProtocolError
	var re *RefusedError
	if errors.As(err, &re) && (re.NotLeader || replica.IsNotLeader(re.Reason)) {
		return false // IsNotLeader: a router older than wire.VersionLeader says it in the reason only
	}
	return errors.Is(err, ErrRefused) || errors.As(err, &pe) && pe.Code == wire.CodeForbidden
}

// hello introduces the publisher on a new connection and learns the
// highest sequence the pubend logged for it; everything up to it is
// acknowledged. The first hello also fixes the pubend (default: the
// router's name) and where numbering continues.
func (p *durablePub) hello(c *durableConn) error {
	p.mu.Lock()
	if p.pubend == "" {
		p.pubend = c.router
	}
	pubend := p.pubend
	p.mu.Unlock()
	if err := c.send(durable.Msg{Kind: durable.MsgHello, Pubend: pubend, Publisher: p.id}); err != nil {
		return err
	}
	return await(context.Background(), c, p.o.IdleTimeout, func(m durable.Msg) (bool, error) {
		switch m.Kind {
		case durable.MsgHelloAck:
			p.mu.Lock()
			if p.last == 0 {
				p.last, p.acked = m.Seq, m.Seq // a kept ID continues after what was logged
			}
			p.mu.Unlock()
			p.ackUpTo(m.Seq)
			return true, nil
		case durable.MsgRefused:
			return true, refusedBy(c.router, m)
		}
		return false, nil
	})
}

// run keeps the publisher connected and its unacknowledged events sent,
// until Close or a permanent failure.
func (p *durablePub) run(c *durableConn, d *dialer) {
	defer close(p.done)
	for {
		err := p.serve(c)
		c.close()
		if err == nil {
			return // closed
		}
		if isRefusal(err) {
			p.fail(err)
			return
		}
		if c, err = d.dial(context.Background(), p.stop, p.hello, isRefusal); err != nil {
			p.fail(err)
			return
		}
		d.connected()
	}
}

// serve sends every unacknowledged event on c and handles the pubend's
// answers until the connection fails (its error) or the publisher is
// closed (nil).
func (p *durablePub) serve(c *durableConn) error {
	p.mu.Lock()
	sent := p.acked // everything above is (re)sent
	p.mu.Unlock()
	var held <-chan time.Time // while the pubend refuses for lack of space
	var refusedSince time.Time
	for {
		var err error
		if held == nil {
			if sent, err = p.sendFrom(c, sent); err != nil {
				return err
			}
		}
		select {
		case <-held:
			held = nil
		case m, ok := <-c.in:
			if !ok {
				return fmt.Errorf("connection to %s: %w", c.router, c.err)
			}
			switch m.Kind {
			case durable.MsgPubRefused:
				p.ackUpTo(m.Seq)
				sent = min(sent, m.Seq) // resend from m.Seq+1
				if m.Reason == "" {
					refusedSince = time.Time{}
					break
				}
				// The pubend's store cannot take events now (a full
				// disk): hold back, resend later, give up after
				// RetryTimeout of refusals.
				if refusedSince.IsZero() {
					refusedSince = time.Now()
				} else if time.Since(refusedSince) > p.o.RetryTimeout {
					return &RefusedError{Router: c.router, Reason: fmt.Sprintf("pubend refused publishes for %v: %s", p.o.RetryTimeout, m.Reason)}
				}
				if held == nil {
					held = time.After(refuseBackoff)
				}
			case durable.MsgPubAck:
				refusedSince = time.Time{}
				p.ackUpTo(m.Seq)
			case durable.MsgRefused:
				return refusedBy(c.router, m)
			}
		case <-p.wake:
		case <-p.stop:
			return nil
		}
	}
}

// refuseBackoff is how long a publisher holds back after the pubend
// refused for lack of space.
const refuseBackoff = 200 * time.Millisecond

// sendFrom sends the queued events above sequence sent and returns the
// new highest sequence sent.
func (p *durablePub) sendFrom(c *durableConn, sent uint64) (uint64, error) {
	for {
		p.mu.Lock()
		sent = max(sent, p.acked)
		if sent >= p.last {
			p.mu.Unlock()
			return sent, nil
		}
		seq := sent + 1
		ev := p.queue[seq-p.acked-1]
		pubend := p.pubend
		p.mu.Unlock()
		if err := c.send(durable.Msg{Kind: durable.MsgPublish, Pubend: pubend, Publisher: p.id, Seq: seq, Event: ev}); err != nil {
			return sent, fmt.Errorf("connection to %s: %w", c.router, err)
		}
		sent = seq
	}
}

// ackUpTo records that every sequence up to seq is logged.
func (p *durablePub) ackUpTo(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if seq <= p.acked {
		return
	}
	seq = min(seq, p.last)
	p.queue = p.queue[seq-p.acked:]
	p.acked = seq
	p.notifyLocked()
}

func (p *durablePub) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *durablePub) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = fmt.Errorf("durable publisher: %w", err)
		p.notifyLocked()
	}
}

func (p *durablePub) publish(ctx context.Context, ev match.Event) (uint64, error) {
	if err := wire.CheckEvent(ev); err != nil {
		return 0, fmt.Errorf("durable publish: %w", err)
	}
	p.mu.Lock()
	for p.err == nil && p.last-p.acked >= uint64(p.o.Window) {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	if p.err != nil {
		return 0, p.err
	}
	p.queue = append(p.queue, ev)
	p.last++
	signal(p.wake)
	return p.last, nil
}

func (p *durablePub) flush(ctx context.Context) error {
	p.mu.Lock()
	target := p.last
	for p.err == nil && p.acked < target {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	if p.acked >= target {
		return nil
	}
	return p.err
}

func (p *durablePub) published() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

func (p *durablePub) acknowledged() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked
}

func (p *durablePub) errNow() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if errors.Is(p.err, ErrClosed) {
		return nil
	}
	return p.err
}

func (p *durablePub) close() error {
	p.once.Do(func() { close(p.stop) })
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.err
	if p.err == nil {
		p.err = ErrClosed
		p.notifyLocked()
	}
	return err
}

// signal leaves a token in a channel of capacity one, without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
