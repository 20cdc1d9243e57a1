package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// durableSub is a DurableSubscription's state and the goroutine that
// keeps its session alive.
type durableSub struct {
	id     string
	filter match.Filter
	o      DurableSubscribeOptions
	out    chan DurableMessage
	done   chan struct{}
	stop   chan struct{}
	acks   chan struct{} // a token when a new acknowledgement waits

	mu      sync.Mutex
	ct      CT   // after the last message handed out
	hasCT   bool // ct is a real CT (else the SHB picks the start)
	lastAck CT   // the latest acknowledgement asked for
	router  string
	err     error
	conn    *durableConn
	session uint64
	once    sync.Once
}

func durableSubscribe(ctx context.Context, opts DurableSubscribeOptions) (*DurableSubscription, error) {
	var err error
	if opts.DurableOptions, err = opts.DurableOptions.withDefaults(); err != nil {
		return nil, err
	}
	if opts.ID == "" {
		return nil, errors.New("durable subscribe: ID is required")
	}
	f, err := match.Parse(opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("durable subscribe: filter: %w", err)
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 1024
	}
	s := &durableSub{id: opts.ID, filter: f, o: opts, out: make(chan DurableMessage, opts.Buffer),
		done: make(chan struct{}), stop: make(chan struct{}), acks: make(chan struct{}, 1), ct: CT{}}
	if opts.CT != nil {
		s.ct, s.hasCT = opts.CT.Clone(), true
	}
	d := newDialer(opts.DurableOptions)
	c, err := d.dial(ctx, s.stop, s.resume, isRefusal)
	if err != nil {
		return nil, fmt.Errorf("durable subscribe %s: %w", opts.ID, err)
	}
	d.connected()
	go s.run(c, d)
	return &DurableSubscription{ds: s}, nil
}

// resume opens a session on c and waits for its start (or refusal); the
// start message is the first on the channel.
func (s *durableSub) resume(c *durableConn) error {
	s.mu.Lock()
	session := rand.Uint64() | 1
	m := durable.Msg{Kind: durable.MsgResume, Sub: s.id, Filter: s.filter, HasCT: s.hasCT, Session: session}
	if s.hasCT {
		m.CT = s.ct.Clone()
	}
	s.mu.Unlock()
	if err := c.send(m); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop: // Close or Unsubscribe: do not wait for the start
			cancel()
		case <-ctx.Done():
		}
	}()
	return await(ctx, c, s.o.RetryTimeout, func(m durable.Msg) (bool, error) {
		switch {
		case m.Kind == durable.MsgRefused:
			return true, refusedBy(c.router, m)
		case m.Kind != durable.MsgStart || m.Session != session:
			return false, nil
		}
		s.mu.Lock()
		start := DurableMessage{Kind: DurableStart, CT: m.CT.Clone()}
		start.Advance(s.ct)
		s.hasCT, s.conn, s.session, s.router = true, c, session, c.router
		ack := s.lastAck
		s.mu.Unlock()
		select {
		case s.out <- start:
		case <-s.stop:
			return true, ErrClosed
		}
		if ack != nil {
			return true, c.send(durable.Msg{Kind: durable.MsgAck, Sub: s.id, CT: ack})
		}
		return true, nil
	})
}

// run relays the session's messages and acknowledgements, reconnecting
// after losses, until Close, Unsubscribe or a permanent failure.
func (s *durableSub) run(c *durableConn, d *dialer) {
	defer close(s.done)
	defer close(s.out)
	for {
		err := s.serve(c)
		if err == nil {
			return
		}
		c.close()
		if isRefusal(err) {
			s.fail(err)
			return
		}
		if c, err = d.dial(context.Background(), s.stop, s.resume, func(error) bool { return false }); err != nil {
			s.fail(err)
			return
		}
		d.connected()
	}
}

// serve relays messages of the current session until the connection
// fails (its error) or the subscription is closed (nil).
func (s *durableSub) serve(c *durableConn) error {
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				return fmt.Errorf("connection to %s: %w", c.router, c.err)
			}
			if m.Kind == durable.MsgRefused {
				return refusedBy(c.router, m)
			}
			if !s.relay(m) {
				return nil
			}
		case <-s.acks:
			s.mu.Lock()
			ack := s.lastAck
			s.mu.Unlock()
			if err := c.send(durable.Msg{Kind: durable.MsgAck, Sub: s.id, CT: ack}); err != nil {
				return fmt.Errorf("connection to %s: %w", c.router, err)
			}
		case <-s.stop:
			return nil
		}
	}
}

// relay hands one message of the session to the application, dropping
// anything at or below the CT already handed out; false means the
// subscription was closed while waiting.
func (s *durableSub) relay(m durable.Msg) bool {
	s.mu.Lock()
	if m.Session != s.session {
		s.mu.Unlock()
		return true
	}
	at := s.ct[m.Pubend]
	s.mu.Unlock()
	var dm DurableMessage
	switch m.Kind {
	case durable.MsgEvent:
		dm = DurableMessage{Kind: DurableEvent, Pubend: m.Pubend, Tick: m.Tick, Event: m.Event}
	case durable.MsgSubSilence:
		dm = DurableMessage{Kind: DurableSilence, Pubend: m.Pubend, Tick: m.Tick}
	case durable.MsgGap:
		dm = DurableMessage{Kind: DurableGap, Pubend: m.Pubend, From: max(m.From, at+1), To: m.To}
	default:
		return true
	}
	if dm.Tick <= at && dm.To <= at {
		return true // already handed out
	}
	select {
	case s.out <- dm:
	case <-s.stop:
		return false
	}
	s.mu.Lock()
	dm.Advance(s.ct)
	s.mu.Unlock()
	return true
}

func (s *durableSub) ack(ct CT) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.lastAck = ct.Clone()
	select {
	case s.acks <- struct{}{}:
	default:
	}
	return nil
}

func (s *durableSub) routerName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.router
}

func (s *durableSub) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = fmt.Errorf("durable subscription %s: %w", s.id, err)
	}
}

func (s *durableSub) errNow() error {
	select {
	case <-s.done:
	default:
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// end stops the goroutine and waits for it; the messages not read are
// dropped.
func (s *durableSub) end(err error) {
	s.fail(err)
	s.once.Do(func() { close(s.stop) })
	for {
		select {
		case <-s.done:
			return
		case <-s.out:
		}
	}
}

// close ends the subscription and its connection. The connection is read
// once the goroutine has stopped: a Close that lands while the
// subscription redials must close the connection the redial opened, not
// the one lost before it (left open, its reader would block for ever).
func (s *durableSub) close() error {
	s.end(ErrClosed)
	if c := s.lastConn(); c != nil {
		c.close()
	}
	return nil
}

// lastConn is the connection of the latest session started.
func (s *durableSub) lastConn() *durableConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

func (s *durableSub) unsubscribe(ctx context.Context) error {
	s.end(ErrClosed)
	c := s.lastConn()
	if c == nil {
		return errors.New("durable unsubscribe: no session")
	}
	if err := c.send(durable.Msg{Kind: durable.MsgUnsubscribe, Sub: s.id}); err != nil {
		c.close()
		return fmt.Errorf("durable unsubscribe %s: %w", s.id, err)
	}
	c.finish(ctx)
	return nil
}
