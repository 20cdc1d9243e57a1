package netbench

import (
	"context"

	"github.com/sift-pubsub/sift/bench"
	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// A System is one messaging system under test (Sift in one forwarding
// mode, NATS with or without TLS). Start brings up a fresh cluster for one
// run; the run then connects subscribers and publishers to it.
type System interface {
	// Name identifies the system in reports, e.g. "sift-exact", "nats-tls".
	Name() string
	// Start brings up a cluster of routers (servers) on loopback, linked
	// and ready, with its state (certificates, data) under dir.
	Start(ctx context.Context, routers int, dir string) (Cluster, error)
}

// A Cluster is a running topology of one system.
type Cluster interface {
	// Subscribe connects a subscriber to router at (0-based) with sub's
	// filter, and returns once the subscription is in force at every
	// router: an event published anywhere afterwards reaches it. Every
	// event matching sub.Filter is passed to deliver, from one goroutine
	// per subscriber; a system that cannot filter by content delivers
	// only the events its application-side check of sub.Filter accepts.
	Subscribe(ctx context.Context, at int, sub workload.NetSub, deliver func(match.Event)) error
	// Publisher connects a publisher to router at. An immediate
	// publisher sends every event at once (for latency at a low rate);
	// otherwise the client library batches as it does by default.
	Publisher(ctx context.Context, at int, immediate bool) (Publisher, error)
	// WireBytes returns the bytes sent so far on every connection of the
	// cluster (clients and router-to-router), counted once, and what
	// layer they were counted at; ok is false when unknown.
	WireBytes() (n int64, layer string, ok bool)
	// Close disconnects every client and stops every router.
	Close() error
}

// A Publisher publishes events, batching as its client library does.
type Publisher interface {
	// Publish sends one event (perhaps buffered).
	Publish(ctx context.Context, e match.Event) error
	// Flush returns once everything published has left the client and
	// the router accepted it.
	Flush(ctx context.Context) error
}

// TransportReporter is a Publisher that also reports its connection's
// packet counters since it connected (Sift's QUIC connections); the
// throughput phase records the difference over the phase.
type TransportReporter interface {
	TransportStats() TransportStats
}

// Peer names accepted by --peer.
const (
	PeerNone = bench.PeerNone
	PeerNATS = "nats"
)

// peers are the registered peers; PeerNATS registers itself only in binaries
// built with the build tag natspeer.
var peers = bench.NewPeers[System](PeerNATS)

// RegisterPeer makes a peer available under name: systems returns the
// systems it runs.
func RegisterPeer(name string, systems func() []System) { peers.Register(name, systems) }

// ErrPeerNotBuilt says how to get a peer this binary was built without.
type ErrPeerNotBuilt = bench.ErrPeerNotBuilt

// PeerSystems returns the systems of peer name ("none" gives none).
func PeerSystems(name string) ([]System, error) { return peers.Systems(name) }
