package client

import (
	"context"
	"errors"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// Durable publishing and subscribing (Gryphon's exactly-once delivery,
// package durable, wired into routers by router/durable*.go).
//
// A durable publisher and a durable subscription each own their
// connection: they dial the first reachable address of their Routers list,
// and after a loss they dial again (the same list, in turn, with
// exponential backoff) until RetryTimeout has passed without a working
// connection. The messages travel as wire.Durable frames on the control
// stream; plain Publish and Subscribe are not available on these
// connections.

// CT is a checkpoint token: per pubend, the tick up to which a subscriber
// has consumed. A subscriber stores it with what it consumed and presents
// it to resume.
type CT = durable.CT

// Tick is a pubend timestamp in microseconds, strictly increasing per
// pubend.
type Tick = durable.Tick

// ErrRefused is wrapped by the errors of requests the router refused for
// good: re-subscribing an id with a different filter, resuming an id the
// router does not know, publishing to a pubend the router does not host.
// errors.As with *RefusedError gives the router's reason.
var ErrRefused = errors.New("refused by the router")

// RefusedError is a refusal by the router, with its reason.
type RefusedError struct {
	// Router is the name of the router that refused.
	Router string
	// Reason is the router's explanation.
	Reason string
	// NotLeader: the router holds a replica of the replicated pubend but
	// does not lead it; Leader names the router it believes leads ("":
	// none known). Another router may take the publishes.
	NotLeader bool
	Leader    string
}

// refusedBy is the error of a durable refusal m from router.
func refusedBy(router string, m durable.Msg) *RefusedError {
	return &RefusedError{Router: router, Reason: m.Reason, NotLeader: m.NotLeader, Leader: m.Leader}
}

func (e *RefusedError) Error() string { return "router " + e.Router + " refused: " + e.Reason }

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// ErrUnreachable is wrapped by the error of a durable publisher or
// subscription that found no working router for RetryTimeout.
var ErrUnreachable = errors.New("no router reachable")

// DurableOptions are the connection settings shared by durable publishers
// and subscriptions.
type DurableOptions struct {
	// Options are the connection options; TLS is required. BatchSize,
	// BatchBytes, MaxInFlight, SubscriptionBuffer and OnEvent are unused.
	Options
	// Routers are the router addresses (HOST:PORT) to connect to, tried in
	// order, on the first connection and after every loss. At least one is
	// required. A publisher lists the addresses of the router hosting its
	// pubend; a subscription those of its SHB.
	Routers []string
	// RetryTimeout is how long the publisher or subscription keeps trying
	// to (re)connect before it gives up with ErrUnreachable; default 30s.
	// It also bounds how long a connected publisher waits for an
	// acknowledgement before it reconnects.
	RetryTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between connection
	// attempts, which doubles from MinBackoff to MaxBackoff (with jitter);
	// defaults 50ms and 2s.
	MinBackoff, MaxBackoff time.Duration
	// DialTimeout bounds the first connection attempt's handshake at a
	// router. A router that died without closing its connections (kill
	// -9, a host gone) never answers, so the attempt costs this much
	// before the next router is tried. After an attempt ran out of it,
	// the next one at the same router gets twice as long (up to
	// RetryTimeout), so a router alive but slower than this to handshake
	// is still reached. (The opening exchange after it, a publisher's hello
	// or a subscription's resume, may wait for the pubend's commit; a
	// router that dies meanwhile is noticed by its silence, Heartbeat.)
	// Default 2s.
	DialTimeout time.Duration
	// Heartbeat is how long a connection may stay silent before the client
	// takes its router for gone and reconnects; routers send a heartbeat
	// every 250ms. Default 3s (a router that restarted is noticed sooner:
	// the client's own padded heartbeats, every 250ms, draw its stateless
	// reset); negative: never (the QUIC idle timeout still applies).
	Heartbeat time.Duration
}

// DurablePublisherOptions configure a DurablePublisher.
type DurablePublisherOptions struct {
	DurableOptions
	// Pubend names the pubend to publish to; it must be hosted by the
	// router reached. Default: the router's name (siftd's default pubend).
	Pubend string
	// ID identifies the publisher to the pubend, which logs each (ID,
	// sequence number) at most once. Default: a random 128-bit hex string,
	// new for every NewDurablePublisher. A publisher that keeps its ID
	// across its own restarts continues numbering after the highest
	// sequence the pubend logged for it.
	ID string
	// Window is the most published events not yet acknowledged; Publish
	// waits beyond it. Default 4096.
	Window int
}

// DurablePublisher publishes events durably to one pubend: an event is
// acknowledged only once the pubend has logged it and synced the log.
// Each event gets the next sequence number of the publisher; after a lost
// connection (the router may have crashed) the publisher reconnects,
// learns the highest sequence the pubend logged for its ID, and resends
// every event above it, so nothing is lost and nothing is logged twice.
// Safe for concurrent use.
type DurablePublisher struct {
	dp *durablePub
}

// NewDurablePublisher connects to the first reachable router of
// opts.Routers and introduces the publisher to its pubend. It fails if no
// router is reachable within ctx and RetryTimeout, or if the router does
// not host the pubend (an error wrapping ErrRefused).
func NewDurablePublisher(ctx context.Context, opts DurablePublisherOptions) (*DurablePublisher, error) {
	return newDurablePublisher(ctx, opts)
}

// ID returns the publisher id.
func (p *DurablePublisher) ID() string { return p.dp.id }

// Pubend returns the pubend's name.
func (p *DurablePublisher) Pubend() string { return p.dp.pubend }

// Publish queues ev under the next sequence number and returns that
// number (from 1). It waits while Window events are unacknowledged, until
// ctx ends. An error means ev was not queued (a closed or failed
// publisher, an event that cannot travel), except ctx errors, after which
// ev may or may not have been queued: check Published.
func (p *DurablePublisher) Publish(ctx context.Context, ev match.Event) (uint64, error) {
	return p.dp.publish(ctx, ev)
}

// Flush waits until every event published before it is acknowledged
// (logged and synced at the pubend), riding out reconnections. It fails
// when ctx ends or when the publisher gave up (ErrUnreachable after
// RetryTimeout without a router, or a refusal).
func (p *DurablePublisher) Flush(ctx context.Context) error { return p.dp.flush(ctx) }

// Published returns the highest sequence number queued so far.
func (p *DurablePublisher) Published() uint64 { return p.dp.published() }

// Acknowledged returns the highest sequence number acknowledged: every
// event up to it is logged at the pubend.
func (p *DurablePublisher) Acknowledged() uint64 { return p.dp.acknowledged() }

// Err returns why the publisher stopped (nil while it runs).
func (p *DurablePublisher) Err() error { return p.dp.errNow() }

// Close closes the connection; unacknowledged events are dropped (call
// Flush first). It returns nil, or the error that had stopped the
// publisher.
func (p *DurablePublisher) Close() error { return p.dp.close() }

// DurableSubscribeOptions configure a durable subscription.
type DurableSubscribeOptions struct {
	DurableOptions
	// ID names the durable subscription at its SHB; required. The SHB
	// keeps it, with its filter and the last acknowledged CT, until
	// Unsubscribe.
	ID string
	// Filter is the subscription's filter (match syntax); required.
	// Subscribing an existing ID with a different filter is refused
	// (ErrRefused).
	Filter string
	// CT is where to resume: delivery starts after these ticks. Nil means
	// "no CT": a known ID resumes from its last acknowledgement recorded
	// at the SHB, a new ID starts now. A pubend absent from a non-nil CT
	// starts where the subscription started on it.
	CT CT
	// Buffer is the capacity of the Messages channel; default 1024.
	Buffer int
}

// DurableKind says what a DurableMessage is.
type DurableKind uint8

// The kinds of durable messages.
const (
	// DurableStart opens a session (the first connection and every
	// reconnection): CT holds, per pubend, the tick after which delivery
	// starts. Record it if it names pubends the application's CT lacks.
	DurableStart DurableKind = iota + 1
	// DurableEvent is an event: Pubend, Tick, Event.
	DurableEvent
	// DurableSilence says nothing matched on Pubend up to Tick: the
	// application's CT for Pubend may move to Tick.
	DurableSilence
	// DurableGap says the ticks [From, To] of Pubend were released before
	// they could be delivered (early release): events there are lost to
	// this subscription. The CT for Pubend may move to To.
	DurableGap
)

// String returns the kind's name.
func (k DurableKind) String() string {
	switch k {
	case DurableStart:
		return "start"
	case DurableEvent:
		return "event"
	case DurableSilence:
		return "silence"
	case DurableGap:
		return "gap"
	}
	return "DurableKind(?)"
}

// DurableMessage is one message of a durable subscription. Kind says
// which fields are set.
type DurableMessage struct {
	Kind     DurableKind
	Pubend   string
	Tick     Tick // DurableEvent, DurableSilence
	From, To Tick // DurableGap, inclusive
	Event    match.Event
	CT       CT // DurableStart
}

// Advance moves ct past m: the tick of an event or silence, the end of a
// gap; a DurableStart fills in the pubends ct lacks. ct must not be nil.
func (m DurableMessage) Advance(ct CT) {
	switch m.Kind {
	case DurableStart:
		for p, t := range m.CT {
			if _, ok := ct[p]; !ok {
				ct[p] = t
			}
		}
	case DurableEvent, DurableSilence:
		ct[m.Pubend] = max(ct[m.Pubend], m.Tick)
	case DurableGap:
		ct[m.Pubend] = max(ct[m.Pubend], m.To)
	}
}

// DurableSubscription is a durable subscription's live side: its
// messages, per pubend in tick order, each exactly once (the library
// drops anything at or below the CT it has handed out), across
// reconnections. After a lost connection it reconnects (Routers in turn)
// and resumes after the last message it put on the Messages channel.
//
// The application must call Ack regularly (the SHB sends at most a bounded
// number of unacknowledged events per pubend, 1024 by default, and then
// waits), after it has stored what it consumed. Safe for concurrent use.
type DurableSubscription struct {
	ds *durableSub
}

// DurableSubscribe connects to the first reachable router of
// opts.Routers, resumes (or registers) the subscription and returns once
// its first session started (a DurableStart message is then the first on
// the channel). It fails if the router refuses (ErrRefused: a known ID
// with another filter, an ID unknown to this SHB presented with a CT), or
// if no router is reachable within ctx and RetryTimeout.
func DurableSubscribe(ctx context.Context, opts DurableSubscribeOptions) (*DurableSubscription, error) {
	return durableSubscribe(ctx, opts)
}

// ID returns the subscription id.
func (s *DurableSubscription) ID() string { return s.ds.id }

// Messages returns the channel of the subscription's messages. It is
// closed when the subscription ends (Close, Unsubscribe, or a failure);
// Err then says why.
func (s *DurableSubscription) Messages() <-chan DurableMessage { return s.ds.out }

// Ack acknowledges ct to the SHB: everything up to it is consumed and
// stored by the application, so the SHB may release it. Call it only
// after ct is stored. It does not wait: the latest acknowledgement is sent
// at once, or after the next reconnection. It fails only once the
// subscription has ended.
func (s *DurableSubscription) Ack(ct CT) error { return s.ds.ack(ct) }

// Router returns the name of the router of the current (or last) session.
func (s *DurableSubscription) Router() string { return s.ds.routerName() }

// Done is closed when the subscription has ended.
func (s *DurableSubscription) Done() <-chan struct{} { return s.ds.done }

// Err returns why the subscription ended (ErrClosed after Close), or nil
// while it runs.
func (s *DurableSubscription) Err() error { return s.ds.errNow() }

// Close ends the session and closes the connection; the subscription
// stays registered at the SHB (resume it later with its ID).
func (s *DurableSubscription) Close() error { return s.ds.close() }

// Unsubscribe removes the subscription from its SHB (its ID and record
// are forgotten) and closes it.
func (s *DurableSubscription) Unsubscribe(ctx context.Context) error {
	return s.ds.unsubscribe(ctx)
}
