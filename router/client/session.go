package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sift-pubsub/sift/match"
)

// Session is a plain (not durable) client that stays connected: when its
// connection ends for any reason but Close, it dials the next of its
// router addresses with exponential backoff and jitter, installs every
// subscription again and calls OnReady once they are all acknowledged,
// as after the first connection.
//
// What a reconnection may miss: events published while no connection
// was up, or before a subscription was installed again, are not
// delivered to it (plain delivery is at most once), and an event may be
// delivered twice if it crossed the old and the new connection. Use
// durable subscriptions (DurableSubscribe) for exactly-once delivery with
// gaps reported. A subscription the router refuses when installed again
// (say, permissions that changed) ends with the refusal.
//
// Events published through Session.Publish are published again on the
// next connection when the router had not acknowledged them (at least
// once to a router; session_publish.go says exactly what that means for
// subscribers). Events published on Client() directly are not.
type Session struct {
	addrs []string
	opts  Options
	so    SessionOptions

	mu       sync.Mutex
	cur      *Client
	switched chan struct{} // closed and replaced when cur changes
	subs     map[*SessionSub]bool
	closed   bool
	done     chan struct{}

	pubMu sync.Mutex // publishing (session_publish.go); taken before mu
	pub   sessionPub
}

// SessionOptions configure a Session's reconnection.
type SessionOptions struct {
	// MinBackoff and MaxBackoff bound the wait between failed dials; it
	// doubles from MinBackoff (default 100ms) up to MaxBackoff (default
	// 5s), with jitter.
	MinBackoff, MaxBackoff time.Duration
	// DialTimeout bounds each dial; default 10s.
	DialTimeout time.Duration
	// OnReady, if set, is called after each connection (the first one
	// too) once every subscription is installed again, with the router's
	// address; OnLost when a connection ends, with why.
	OnReady func(addr string)
	OnLost  func(addr string, err error)
}

// SessionSub is a subscription of a Session: it survives reconnections.
type SessionSub struct {
	s      *Session
	filter string
	ch     chan match.Event
	mu     sync.Mutex
	err    error
	ended  chan struct{}
	once   sync.Once

	instMu sync.Mutex // held while installing, so each connection gets it once
	on     *Client    // the connection it is installed on
}

// DialSession connects to the first of addrs that answers (trying them in
// turn with backoff until ctx ends) and keeps the session connected until
// Close.
func DialSession(ctx context.Context, addrs []string, opts Options, so SessionOptions) (*Session, error) {
	if len(addrs) == 0 {
		return nil, errors.New("client: DialSession needs a router address")
	}
	if so.MinBackoff <= 0 {
		so.MinBackoff = 100 * time.Millisecond
	}
	if so.MaxBackoff <= 0 {
		so.MaxBackoff = 5 * time.Second
	}
	if so.DialTimeout <= 0 {
		so.DialTimeout = 10 * time.Second
	}
	s := &Session{addrs: addrs, opts: opts, so: so, subs: map[*SessionSub]bool{}, done: make(chan struct{}), switched: make(chan struct{})}
	c, addr, err := s.dial(ctx, 0)
	if err != nil {
		return nil, err
	}
	s.cur = c
	if so.OnReady != nil {
		so.OnReady(addr)
	}
	go s.keep(c, addr)
	return s, nil
}

// dial tries the addresses in turn, from index next, with backoff, until
// one connects or ctx (or the session) ends.
func (s *Session) dial(ctx context.Context, next int) (*Client, string, error) {
	backoff := s.so.MinBackoff
	var last error
	for i := next; ; i++ {
		addr := s.addrs[i%len(s.addrs)]
		dctx, cancel := context.WithTimeout(ctx, s.so.DialTimeout)
		c, err := Dial(dctx, addr, s.opts)
		cancel()
		if err == nil {
			return c, addr, nil
		}
		if IsCode(err, CodeForbidden) {
			return nil, "", err // another router would refuse this certificate too
		}
		last = err
		t := time.NewTimer(backoff/2 + rand.N(backoff/2+1))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, "", fmt.Errorf("%w (last dial: %v)", ctx.Err(), last)
		case <-s.done:
			t.Stop()
			return nil, "", ErrClosed
		}
		backoff = min(2*backoff, s.so.MaxBackoff)
	}
}

// keep waits for the connection to end, then reconnects and installs the
// subscriptions again, until Close.
func (s *Session) keep(c *Client, addr string) {
	next := 0
	for {
		select {
		case <-s.done:
			return
		case <-c.Done():
		}
		if s.so.OnLost != nil {
			s.so.OnLost(addr, c.Err())
		}
		for i, a := range s.addrs {
			if a == addr {
				next = i + 1
			}
		}
		nc, naddr, err := s.dial(context.Background(), next)
		if err != nil {
			s.endAll(err)
			return
		}
		install := func() {
			s.mu.Lock()
			subs := make([]*SessionSub, 0, len(s.subs))
			for ss := range s.subs {
				subs = append(subs, ss)
			}
			s.mu.Unlock()
			for _, ss := range subs {
				if err := ss.installOn(context.Background(), nc); err != nil && nc.Err() == nil {
					ss.end(err) // refused: the router will not take it again
				}
			}
		}
		if !s.switchTo(c, nc, install) { // session_publish.go: then what c did not acknowledge goes out on nc
			nc.Close()
			return
		}
		c, addr = nc, naddr
		if nc.Err() == nil && s.so.OnReady != nil {
			s.so.OnReady(addr)
		}
	}
}

// Subscribe installs filter on the current connection and again after
// every reconnection. Made while the Session is reconnecting, it waits
// for the next connection (until ctx ends).
func (s *Session) Subscribe(ctx context.Context, filter string) (*SessionSub, error) {
	ss := &SessionSub{s: s, filter: filter, ch: make(chan match.Event, max(s.opts.SubscriptionBuffer, 1024)), ended: make(chan struct{})}
	s.mu.Lock()
	s.subs[ss] = true // from now on every reconnection installs it too
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.subs, ss)
		s.mu.Unlock()
	}
	for {
		c, closed := s.current()
		if closed {
			forget()
			return nil, ErrClosed
		}
		err := ss.installOn(ctx, c)
		if err == nil {
			return ss, nil
		}
		if c.Err() == nil || ctx.Err() != nil {
			forget()
			return nil, err // refused, or ctx
		}
		if err := s.waitSwitch(ctx, c); err != nil { // session_publish.go
			forget()
			return nil, fmt.Errorf("subscribe: %w", err)
		}
	}
}

// installOn subscribes on c, unless it is installed there already, and
// forwards its events until c ends.
func (ss *SessionSub) installOn(ctx context.Context, c *Client) error {
	ss.instMu.Lock()
	defer ss.instMu.Unlock()
	if ss.on == c {
		return nil
	}
	sub, err := c.Subscribe(ctx, ss.filter)
	if err != nil {
		return err
	}
	ss.on = c
	go func() {
		for {
			e, err := sub.Next(context.Background())
			if err != nil {
				return // the connection ended: keep installs it again
			}
			select {
			case ss.ch <- e:
			case <-ss.ended:
				return
			}
		}
	}()
	return nil
}

// Next returns the subscription's next event; it waits across
// reconnections, and fails once the subscription ended.
func (ss *SessionSub) Next(ctx context.Context) (match.Event, error) {
	select {
	case e := <-ss.ch:
		return e, nil
	case <-ss.ended:
		return match.Event{}, ss.Err()
	case <-ctx.Done():
		return match.Event{}, ctx.Err()
	}
}

// Err returns why the subscription ended (nil while it lasts).
func (ss *SessionSub) Err() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.err
}

func (ss *SessionSub) end(err error) {
	ss.once.Do(func() {
		ss.mu.Lock()
		ss.err = err
		ss.mu.Unlock()
		close(ss.ended)
		ss.s.mu.Lock()
		delete(ss.s.subs, ss)
		ss.s.mu.Unlock()
	})
}

func (s *Session) endAll(err error) {
	s.mu.Lock()
	subs := make([]*SessionSub, 0, len(s.subs))
	for ss := range s.subs {
		subs = append(subs, ss)
	}
	s.mu.Unlock()
	for _, ss := range subs {
		ss.end(err)
	}
}

// Client returns the current connection. Publishing on it directly is
// not replayed after a reconnection (a publish on a connection that just
// ended fails, and its Accepted says what that connection's router
// accepted); Session.Publish is.
func (s *Session) Client() *Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Close ends the session, its connection and its subscriptions.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	c := s.cur
	s.mu.Unlock()
	s.endAll(ErrClosed)
	return c.Close()
}
