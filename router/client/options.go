package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// Options configure a Client. Zero fields take the documented defaults;
// TLS is required.
type Options struct {
	// TLS is the client TLS configuration, normally certs.Loaded's
	// ClientConfig: the client's certificate and the deployment CA.
	TLS *tls.Config
	// Name is sent in Hello and shows in the router's logs; default
	// "sift-client".
	Name string
	// BatchSize is the most events per publish frame; default 512.
	BatchSize int
	// BatchBytes is the most encoded bytes per publish frame; default
	// 256 KiB (kept under the router's frame limit).
	BatchBytes int
	// MaxInFlight is the most unacknowledged publish batches; default 16.
	MaxInFlight int
	// SubscriptionBuffer is each subscription's channel capacity; default
	// 1024 (unused, and no buffer is allocated, when OnEvent or
	// OnBorrowedEvent is set).
	SubscriptionBuffer int
	// OnEvent, if set, receives every delivery instead of the
	// subscriptions' channels, called from the connection's reader
	// goroutine, one call at a time, in delivery order. It suits
	// applications with very many subscriptions per connection; it must not
	// block for long, since it holds up every delivery behind it.
	OnEvent func(s *Subscription, e match.Event)
	// OnBorrowedEvent is OnEvent with borrowed events, for subscribers
	// that read each event once and let it go: it is called exactly as
	// OnEvent would be (instead of the channels, on the reader goroutine,
	// one call at a time, in delivery order), but the event and its
	// attribute list are valid only until the call returns, so that the
	// client may decode events into memory it reuses for the next ones
	// (see borrow.go) instead of allocating twice per event. Names and
	// string values taken from the event are ordinary immutable strings
	// and may be kept (a short string value keeps the 16 KiB chunk it was
	// copied into alive, never the frame: strings.Clone one kept for
	// long; a name is the reader's interned copy). To use the event
	// itself after the call,
	// keep KeepEvent(e). OnEvent and OnBorrowedEvent are exclusive.
	OnBorrowedEvent func(s *Subscription, e match.Event)
	// IdleTimeout closes a silent connection, so that a router that died
	// (or whose host vanished) is noticed; default 5s.
	IdleTimeout time.Duration
	// KeepAlive is the period of keep-alives and heartbeats; default 1s
	// (at most a third of IdleTimeout). A router that restarted answers a
	// heartbeat with a stateless reset, so its clients notice within a
	// period.
	KeepAlive time.Duration
	// Linger is how long a partial publish batch waits for more events
	// before it is sent without a Flush; default 1ms, negative: never
	// (only Flush and full batches send).
	Linger time.Duration
	// NoWaitReady makes Subscribe return as soon as the request is sent,
	// without waiting for the router's acknowledgement. In a mesh that
	// acknowledgement comes only once the subscription is installed on
	// every router it must reach (Ready), so without waiting, events
	// published elsewhere in the mesh meanwhile may be missed; the
	// subscription works all the same, and local events reach it as soon
	// as its router has it. A refusal (a bad filter, too many
	// subscriptions) arrives later and ends the subscription: its channel
	// closes and Err returns the refusal.
	NoWaitReady bool
	// Assist, if set, offers this client's CPU to its router for placing
	// subscriptions in the routing table (RTO and FF; see Assist).
	Assist *Assist
	// ProtocolVersion is the newest protocol version the client offers
	// in its Hello (0: the newest it speaks, wire.ClientVersion). An older
	// one makes it behave as a client of that version, e.g. publishing
	// plain Publish frames below wire.VersionPublishDict.
	ProtocolVersion uint64
}

func (o Options) withDefaults() (Options, error) {
	if o.TLS == nil {
		return o, errors.New("client: Options.TLS is required")
	}
	if o.OnEvent != nil && o.OnBorrowedEvent != nil {
		return o, errors.New("client: Options.OnEvent and Options.OnBorrowedEvent are exclusive")
	}
	if o.Name == "" {
		o.Name = "sift-client"
	}
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.BatchSize, 512)
	def(&o.BatchBytes, 256<<10)
	def(&o.MaxInFlight, 16)
	def(&o.SubscriptionBuffer, 1024)
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 5 * time.Second
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = min(time.Second, o.IdleTimeout/3)
	}
	if o.Linger == 0 {
		o.Linger = time.Millisecond
	}
	if o.ProtocolVersion == 0 {
		o.ProtocolVersion = wire.ClientVersion
	}
	if o.ProtocolVersion < wire.Version || o.ProtocolVersion > wire.ClientVersion {
		return o, fmt.Errorf("client: Options.ProtocolVersion %d outside the %d-%d this client speaks", o.ProtocolVersion, wire.Version, wire.ClientVersion)
	}
	return o, nil
}
