package client

import (
	"context"
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// Publishing through a Session: the events the router has not
// acknowledged when a connection ends are published again, in order, on
// the next connection, before anything published later. This is at least
// once from the publisher to a router: an event is lost only with the
// Session (Close, or a process that exits); an event whose batch the old
// router accepted but whose acknowledgement never arrived is published
// twice. A replayed event is routed to the subscriptions the new
// connection's router has when it accepts it, like any other plain
// publish: subscribers that are not reachable then (a router on the way
// still restarting, a subscription not installed again yet) miss it.
// Durable publishing (NewDurablePublisher) removes the duplicates and
// the gaps.

// sessionPub is a Session's publishing state, under Session.pubMu.
type sessionPub struct {
	// pending are the events that joined the current connection's stream
	// (or wait to be replayed on the next one) and are not known to be
	// accepted, oldest first; base is the current connection's Accepted()
	// when pending[0] joined it (how many of its events were accepted
	// before).
	pending []match.Event
	base    uint64
	// accepted counts the events acknowledged by some router, each once;
	// replayed the events published again after a connection ended.
	accepted, replayed uint64
}

// trimLocked drops the events c (the current connection) has accepted.
func (p *sessionPub) trimLocked(c *Client) {
	acc := c.Accepted()
	n := min(acc-p.base, uint64(len(p.pending)))
	clear(p.pending[:n])
	p.pending = p.pending[n:]
	p.base += n
	p.accepted += n
}

// Publish publishes events on the current connection, waiting across
// reconnections (until ctx ends or the Session closes); see the delivery
// guarantee above. An event that cannot travel (see Client.Publish) is an
// error, and the events before it are published.
func (s *Session) Publish(ctx context.Context, events ...match.Event) error {
	for _, e := range events {
		for {
			s.pubMu.Lock()
			c, closed := s.current()
			if closed {
				s.pubMu.Unlock()
				return ErrClosed
			}
			s.pub.trimLocked(c)
			s.pub.pending = append(s.pub.pending, e)
			queued, err := c.publishOne(ctx, e)
			if !queued {
				s.pub.pending = s.pub.pending[:len(s.pub.pending)-1]
			}
			s.pubMu.Unlock()
			if err == nil || (queued && c.Err() != nil) {
				break // sent, or lost with the connection and replayed on the next
			}
			if c.Err() == nil || ctx.Err() != nil {
				return err // the event itself, or ctx
			}
			if err := s.waitSwitch(ctx, c); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		}
	}
	return nil
}

// Flush sends the partial batch and waits until a router has accepted
// every event published so far, across reconnections.
func (s *Session) Flush(ctx context.Context) error {
	for {
		s.pubMu.Lock()
		c, closed := s.current()
		s.pubMu.Unlock()
		if closed {
			return ErrClosed
		}
		err := c.Flush(ctx)
		if err == nil || c.Err() == nil || ctx.Err() != nil {
			return err
		}
		if err := s.waitSwitch(ctx, c); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
	}
}

// Accepted returns how many events published through the Session a
// router has acknowledged (each counted once, on whichever connection).
func (s *Session) Accepted() uint64 {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	if c, _ := s.current(); c != nil {
		s.pub.trimLocked(c)
	}
	return s.pub.accepted
}

// Replayed returns how many events were published again on a new
// connection because the old one ended before the router acknowledged
// them.
func (s *Session) Replayed() uint64 {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	return s.pub.replayed
}

// switchTo makes nc the current connection in place of old (which has
// ended), calls install (the subscriptions, installed again), then
// publishes on nc the events old did not acknowledge, so that the
// Session's own subscriptions see them. It holds pubMu throughout, so no
// Publish interleaves with the replay. It reports false, changing
// nothing, if the Session closed.
func (s *Session) switchTo(old, nc *Client, install func()) bool {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	s.pub.trimLocked(old)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.cur = nc
	close(s.switched)
	s.switched = make(chan struct{})
	s.mu.Unlock()
	install()
	s.pub.base = 0
	replay := s.pub.pending
	s.pub.pending = make([]match.Event, 0, len(replay))
	for i, e := range replay {
		queued, err := nc.publishOne(context.Background(), e)
		if queued {
			s.pub.pending = append(s.pub.pending, e)
			s.pub.replayed++
		}
		if err != nil && nc.Err() != nil {
			s.pub.pending = append(s.pub.pending, replay[i+1:]...) // for the next connection
			return true
		}
		// An event the new router cannot take (its frame limit) is
		// dropped from the replay; it cannot travel there.
	}
	return true
}

// current returns the current connection and whether the Session is
// closed.
func (s *Session) current() (*Client, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.closed
}

// waitSwitch waits until the current connection is no longer old.
func (s *Session) waitSwitch(ctx context.Context, old *Client) error {
	for {
		s.mu.Lock()
		cur, closed, ch := s.cur, s.closed, s.switched
		s.mu.Unlock()
		switch {
		case closed:
			return ErrClosed
		case cur != old:
			return nil
		}
		select {
		case <-ch:
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
