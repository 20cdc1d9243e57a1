package durablebench

import (
	"context"
	"errors"
	"time"

	"github.com/sift-pubsub/sift/bench"
	"github.com/sift-pubsub/sift/match"
)

// A System is one durable messaging system under test. Start brings up a
// fresh cluster for one run.
type System interface {
	// Name identifies the system in reports: "sift", "jetstream".
	Name() string
	// Start brings up the brokers of topo on loopback, linked and ready,
	// with their state under dir.
	Start(ctx context.Context, topo Topology, dir string) (Cluster, error)
}

// A Cluster is a running topology of one system.
type Cluster interface {
	// Publisher connects a durable publisher to the PHB; it keeps up to
	// inFlight publishes unacknowledged.
	Publisher(ctx context.Context, inFlight int) (Publisher, error)
	// Subscribe registers durable subscriber sub at SHB shb (0-based) and
	// starts consuming: every event it receives goes to deliver, from one
	// goroutine per subscriber. It returns once the subscription is in
	// force: events published afterwards reach it. The subscriber
	// acknowledges as ack says (a system may acknowledge every message
	// instead, if that is its way).
	Subscribe(ctx context.Context, shb int, sub Sub, ack AckPolicy, deliver func(match.Event)) (Subscriber, error)
	// Close disconnects every client and stops every broker.
	Close() error
}

// AckPolicy is when a subscriber acknowledges what it consumed: every
// Every messages, and Idle after the last acknowledgement if more was
// consumed since.
type AckPolicy struct {
	Every int
	Idle  time.Duration
}

// SHBRestarter is a Cluster whose SHB routers can be stopped and started
// again on the same address and store (the catch-up shape "SHB restart").
type SHBRestarter interface {
	StopSHB(shb int) error
	StartSHB(ctx context.Context, shb int) error
}

// Tracer is a Cluster that can sum up its brokers' counters in one line,
// printed every SIFT_BENCH_TRACE (a duration) during the catch-up phase.
type Tracer interface {
	Trace(ctx context.Context) string
}

// Diagnoser is a Cluster that can describe its brokers' state, added to
// the error of a stalled run.
type Diagnoser interface {
	Diagnose(ctx context.Context) string
}

// A Publisher publishes events durably.
type Publisher interface {
	// Publish queues one event; it waits while inFlight publishes are
	// unacknowledged.
	Publish(ctx context.Context, e match.Event) error
	// Flush returns once every event published before it is acknowledged
	// (logged and synced by the broker).
	Flush(ctx context.Context) error
	Close() error
}

// A Subscriber is a durable subscriber's consuming side.
type Subscriber interface {
	// Pause disconnects; the broker keeps the subscription and what it
	// has not acknowledged.
	Pause() error
	// Resume reconnects and continues after what was consumed.
	Resume(ctx context.Context) error
	// Close disconnects for good.
	Close() error
}

// Peer names accepted by --peer.
const (
	PeerNone      = bench.PeerNone
	PeerJetStream = "jetstream"
)

// peers are the registered peers; PeerJetStream registers itself only in binaries
// built with the build tag natspeer.
var peers = bench.NewPeers[System](PeerJetStream)

// RegisterPeer makes a peer available under name: systems returns the
// systems it runs.
func RegisterPeer(name string, systems func() []System) { peers.Register(name, systems) }

// ErrPeerNotBuilt says how to get a peer this binary was built without.
type ErrPeerNotBuilt = bench.ErrPeerNotBuilt

// PeerSystems returns the systems of peer name ("none" gives none).
func PeerSystems(name string) ([]System, error) { return peers.Systems(name) }

// ErrNoRestart is returned for RestartSHB on a system that cannot restart
// an SHB on its own.
var ErrNoRestart = errors.New("this system has no separate SHB to restart")

// Replicable is a system that can keep its log on several replicas.
type Replicable interface {
	System
	// Replicated returns the system with n replicas.
	Replicated(n int) System
}

// WithReplicas returns the systems for a replicated comparison: each
// Sift both as it is (the baseline) and replicated on n replicas, and
// each other system that can be replicated, replicated.
func WithReplicas(systems []System, n int) []System {
	var out []System
	for _, s := range systems {
		if _, sift := s.(Sift); sift {
			out = append(out, s)
		}
		if r, ok := s.(Replicable); ok {
			s = r.Replicated(n)
		}
		out = append(out, s)
	}
	return out
}
