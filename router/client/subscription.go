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
	if len(filter) > MaxFilterLen { // refused here, alone: the connection stays
		return nil, wire.Errorf(wire.CodeBadFilter, "filter of %d bytes exceeds the limit of %d", len(filter), MaxFilterLen)
	}
	buf := c.opts.SubscriptionBuffer
	if c.callback() != nil {
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
	c.subs.put(s) // before the request: deliveries may beat the ack
	c.mu.Unlock()
	if err := c.request(ctx, reqKey{wire.TypeSubscribe, s.id}, &wire.Subscribe{ID: s.id, Filter: filter}); err != nil {
		c.mu.Lock()
		c.subs.remove(s.id)
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
	ok := c.subs.remove(s.id) != nil
	c.mu.Unlock()
	if !ok {
		return s.Err()
	}
	s.end(ErrUnsubscribed)
	c.unclaim(s.id) // claim.go
	return c.request(ctx, reqKey{wire.TypeUnsubscribe, s.id}, &wire.Unsubscribe{ID: s.id})
}

// ID returns the subscription's id on its connection.
func (s *Subscription) ID() uint64 { return s.id }

// Filter returns the filter text given to Subscribe.
func (s *Subscription) Filter() string { return s.filter }

// Events returns the channel of matching events (unused when
// Options.OnEvent or Options.OnBorrowedEvent is set). It is closed when
// the subscription ends; Err then says why.
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

// subTable maps a connection's subscription ids to their subscriptions.
// Ids are handed out in order (Client.nextSub), so it is a list of pages
// of subPage ids, indexed by id/subPage: a lookup is two slice indexings,
// not a map access (the reader looks up every subscription id of every
// delivery). A page is freed when its last subscription goes, so memory
// follows the live subscriptions, plus one pointer per subPage ids ever
// handed out. The zero value is empty.
//
// Writers (put, remove, drain) hold Client.mu; get takes no lock: the
// page list, the pages and their slots are atomic pointers, and a writer
// replaces the list (copying it) rather than changing its length, so the
// reader finds a delivery's subscriptions one by one without a lock per
// item, as a locked lookup would, once it has released the lock, anyway.
type subTable struct {
	pages atomic.Pointer[[]atomic.Pointer[subPageOf]]
}

const subPage = 256

type subPageOf struct {
	subs [subPage]atomic.Pointer[Subscription]
	live int // writers only
}

// list returns the current page list (nil when empty).
func (t *subTable) list() []atomic.Pointer[subPageOf] {
	if ps := t.pages.Load(); ps != nil {
		return *ps
	}
	return nil
}

// get returns subscription id, or nil. It is safe with concurrent writers.
func (t *subTable) get(id uint64) *Subscription {
	ps := t.list()
	if p := id / subPage; p < uint64(len(ps)) {
		if pg := ps[p].Load(); pg != nil {
			return pg.subs[id%subPage].Load()
		}
	}
	return nil
}

// put adds s under its id.
func (t *subTable) put(s *Subscription) {
	p := s.id / subPage
	ps := t.list()
	if p >= uint64(len(ps)) { // a longer list, published whole
		grown := make([]atomic.Pointer[subPageOf], max(p+1, 2*uint64(len(ps))))
		for i := range ps {
			grown[i].Store(ps[i].Load())
		}
		t.pages.Store(&grown)
		ps = grown
	}
	pg := ps[p].Load()
	if pg == nil {
		pg = new(subPageOf)
		ps[p].Store(pg)
	}
	slot := &pg.subs[s.id%subPage]
	if slot.Load() == nil {
		pg.live++
	}
	slot.Store(s)
}

// remove removes and returns subscription id (nil if absent).
func (t *subTable) remove(id uint64) *Subscription {
	s := t.get(id)
	if s == nil {
		return nil
	}
	ps := t.list()
	pg := ps[id/subPage].Load()
	pg.subs[id%subPage].Store(nil)
	if pg.live--; pg.live == 0 {
		ps[id/subPage].Store(nil)
	}
	return s
}

// drain empties the table and returns what it held.
func (t *subTable) drain() []*Subscription {
	var out []*Subscription
	ps := t.list()
	for i := range ps {
		pg := ps[i].Load()
		if pg == nil {
			continue
		}
		for j := range pg.subs {
			if s := pg.subs[j].Load(); s != nil {
				out = append(out, s)
			}
		}
	}
	t.pages.Store(nil)
	return out
}
