package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// ErrUnsubscribed is the Err of a subscription ended by Unsubscribe.
var ErrUnsubscribed = errors.New("unsubscribed")

// Subscription is one installed filter and the stream of events that
// match it.
type Subscription struct {
	id     uint64
	filter string
	c      chan match.Event

	done    chan struct{} // closed first when the subscription ends
	ended   atomic.Bool   // set, after err, just before done is closed
	sendMu  sync.Mutex    // held by the reader while sending on c
	endOnce sync.Once
	err     error
}

// Subscribe installs filter (in the filter language, e.g.
// `symbol == "IBM" && price < 10`) and returns once the router has
// acknowledged it. A refused filter is a *wire.ProtocolError: CodeBadFilter
// naming the column, CodeTooManySubscriptions, and so on.
func (c *Client) Subscribe(ctx context.Context, filter string) (*Subscription, error) {
	buf := c.opts.SubscriptionBuffer
	if c.opts.OnEvent != nil {
		buf = 0 // the channel is never used
	}
	s := &Subscription{
		id:     c.nextSub.Add(1),
		filter: filter,
		c:      make(chan match.Event, buf),
		done:   make(chan struct{}),
	}
	c.mu.Lock()
	if c.Err() != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.subs[s.id] = s // before the request: deliveries may beat the ack
	c.mu.Unlock()
	if err := c.request(ctx, reqKey{wire.TypeSubscribe, s.id}, &wire.Subscribe{ID: s.id, Filter: filter}); err != nil {
		c.mu.Lock()
		delete(c.subs, s.id)
		c.mu.Unlock()
		s.end(err)
		return nil, err
	}
	return s, nil
}

// Unsubscribe removes the subscription at the router and ends it; its
// channel is closed and Err returns ErrUnsubscribed.
func (c *Client) Unsubscribe(ctx context.Context, s *Subscription) error {
	c.mu.Lock()
	_, ok := c.subs[s.id]
	delete(c.subs, s.id)
	c.mu.Unlock()
	if !ok {
		return s.Err()
	}
	s.end(ErrUnsubscribed)
	return c.request(ctx, reqKey{wire.TypeUnsubscribe, s.id}, &wire.Unsubscribe{ID: s.id})
}

// ID returns the subscription's id on its connection.
func (s *Subscription) ID() uint64 { return s.id }

// Filter returns the filter text given to Subscribe.
func (s *Subscription) Filter() string { return s.filter }

// Events returns the channel of matching events (unused when
// Options.OnEvent is set). It is closed when the subscription ends; Err
// then says why.
func (s *Subscription) Events() <-chan match.Event { return s.c }

// Next returns the next event, or the reason the subscription ended, or
// ctx's error.
func (s *Subscription) Next(ctx context.Context) (match.Event, error) {
	select {
	case e, ok := <-s.c:
		if !ok {
			return match.Event{}, s.Err()
		}
		return e, nil
	case <-ctx.Done():
		return match.Event{}, ctx.Err()
	}
}

// Err returns why the subscription ended, or nil while it is active.
func (s *Subscription) Err() error {
	if !s.ended.Load() { // an atomic load: the reader asks once per delivery
		return nil
	}
	return s.err
}

// deliver hands e to the subscriber, waiting while the channel is full
// unless the subscription or the connection ends.
func (s *Subscription) deliver(e match.Event, connDone <-chan struct{}) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	select {
	case s.c <- e:
	case <-s.done:
	case <-connDone:
	}
}

// end records err and closes the channel, once. Closing done first frees
// a reader blocked in deliver, so taking sendMu cannot wait forever.
func (s *Subscription) end(err error) {
	s.endOnce.Do(func() {
		s.err = err
		s.ended.Store(true)
		close(s.done)
		s.sendMu.Lock()
		close(s.c)
		s.sendMu.Unlock()
	})
}
