//go:build natspeer

package durablebench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// This file is compiled only with the build tag natspeer, so that the
// default build, the tests and the demo never compile nats-server.

func init() {
	RegisterPeer(PeerJetStream, func() []System { return []System{JetStream{}} })
}

// streamName is the benchmark's one stream (subjects ev.>).
const streamName = "BENCH"

// JetStream is one embedded nats-server (github.com/nats-io/nats-server/v2
// as a library) with JetStream on: file storage in the run's folder,
// sync_interval always (every write synced before the publish is
// acknowledged), one stream of replicas 1. Publishers use nats.go's
// jetstream PublishAsync with at most InFlight pending; subscribers are
// durable pull consumers (AckExplicit, every message acknowledged,
// MaxAckPending 1024 as Sift's session queue, AckWait 30s, the
// default) filtered on
// their group's subject ev.K. Events travel in Sift's binary encoding.
//
// With Replicas above 1 it is a cluster of that many servers in the
// process (routes on loopback, each with its own store) and the stream
// has that many replicas (R3: a publish is acknowledged once a majority
// stored it, each synced with sync_interval always). Clients connect to
// the first server.
type JetStream struct {
	Replicas int
}

// Name is "jetstream", or "jetstream-rN" with N replicas.
func (j JetStream) Name() string { return replicatedName("jetstream", j.Replicas) }

// Replicated returns the system with a cluster of n servers and a stream
// of n replicas.
func (j JetStream) Replicated(n int) System { j.Replicas = n; return j }

// Start starts the servers and creates the stream. The topology's hops
// and SHBs have no counterpart.
func (j JetStream) Start(ctx context.Context, _ Topology, dir string) (Cluster, error) {
	n := max(j.Replicas, 1)
	routes, err := freeRoutePorts(n)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	jc := &jsCluster{}
	for i := range n {
		opts := &server.Options{ServerName: fmt.Sprintf("js%d", i), Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("jetstream%d", i)), SyncAlways: true, SyncInterval: 2 * time.Minute}
		if n > 1 {
			opts.Cluster = server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: routes[i]}
			for k, p := range routes {
				if k != i {
					opts.Routes = append(opts.Routes, server.RoutesFromStr(fmt.Sprintf("nats-route://127.0.0.1:%d", p))...)
				}
			}
		}
		s, err := server.NewServer(opts)
		if err != nil {
			jc.Close()
			return nil, fmt.Errorf("jetstream: %w", err)
		}
		go s.Start()
		jc.servers = append(jc.servers, s)
	}
	for _, s := range jc.servers {
		if !s.ReadyForConnections(10 * time.Second) {
			jc.Close()
			return nil, errors.New("jetstream: server not ready")
		}
	}
	jc.s = jc.servers[0]
	if err := jc.createStream(ctx, n); err != nil {
		jc.Close()
		return nil, err
	}
	return jc, nil
}

// createStream creates the stream; a cluster takes a few seconds to
// elect its meta leader, and refuses until then.
func (jc *jsCluster) createStream(ctx context.Context, replicas int) error {
	nc, js, err := jc.connect("admin")
	if err != nil {
		return err
	}
	defer nc.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = js.CreateStream(cctx, jetstream.StreamConfig{Name: streamName, Subjects: []string{"ev.>"},
			Storage: jetstream.FileStorage, Replicas: replicas})
		cancel()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("jetstream: create stream (replicas %d): %w", replicas, err)
	}
	return nil
}

// freeRoutePorts reserves n loopback TCP ports for the cluster routes.
func freeRoutePorts(n int) ([]int, error) {
	if n == 1 {
		return nil, nil
	}
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	return ports, nil
}

type jsCluster struct {
	s       *server.Server // the one clients connect to
	servers []*server.Server
	mu      sync.Mutex
	conns   []*nats.Conn
}

func (jc *jsCluster) connect(name string, opts ...jetstream.JetStreamOpt) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(jc.s.ClientURL(), nats.Name(name), nats.NoReconnect())
	if err != nil {
		return nil, nil, fmt.Errorf("jetstream: connect %s: %w", name, err)
	}
	js, err := jetstream.New(nc, opts...)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	jc.mu.Lock()
	jc.conns = append(jc.conns, nc)
	jc.mu.Unlock()
	return nc, js, nil
}

// Publisher connects a publisher with at most inFlight async publishes
// pending.
func (jc *jsCluster) Publisher(_ context.Context, inFlight int) (Publisher, error) {
	p := &jsPublisher{}
	_, js, err := jc.connect("pub", jetstream.WithPublishAsyncMaxPending(inFlight),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) { p.fail(err) }))
	if err != nil {
		return nil, err
	}
	p.js = js
	return p, nil
}

type jsPublisher struct {
	js    jetstream.JetStream
	mu    sync.Mutex
	err   error
	fails atomic.Int64
}

func (p *jsPublisher) fail(err error) {
	p.fails.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// Publish sends the event's encoding on its group's subject; nats.go
// waits while inFlight publishes are unacknowledged.
func (p *jsPublisher) Publish(_ context.Context, e match.Event) error {
	_, err := p.js.PublishAsync(Subject(GroupOf(e)), wire.AppendEvent(nil, e), jetstream.WithStallWait(time.Minute))
	if err != nil {
		return fmt.Errorf("jetstream: publish: %w", err)
	}
	return nil
}

// Flush waits until every publish is acknowledged, and fails if any was
// refused.
func (p *jsPublisher) Flush(ctx context.Context) error {
	select {
	case <-p.js.PublishAsyncComplete():
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return fmt.Errorf("jetstream: %d publishes failed: %w", p.fails.Load(), p.err)
	}
	return nil
}

func (p *jsPublisher) Close() error { return nil }

// Subscribe creates the durable consumer and starts consuming.
func (jc *jsCluster) Subscribe(ctx context.Context, _ int, sub Sub, _ AckPolicy, deliver func(match.Event)) (Subscriber, error) {
	_, js, err := jc.connect(sub.ID)
	if err != nil {
		return nil, err
	}
	c, err := js.CreateOrUpdateConsumer(ctx, streamName, jetstream.ConsumerConfig{Durable: sub.ID, FilterSubject: sub.Subject,
		AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 1024, AckWait: 30 * time.Second,
		DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return nil, fmt.Errorf("jetstream: consumer %s: %w", sub.ID, err)
	}
	s := &jsSubscriber{c: c, deliver: deliver}
	return s, s.Resume(ctx)
}

// jsSubscriber consumes a durable pull consumer; Pause drains it (the
// buffered messages are handled), Resume consumes again.
type jsSubscriber struct {
	c       jetstream.Consumer
	deliver func(match.Event)
	mu      sync.Mutex
	cc      jetstream.ConsumeContext
}

func (s *jsSubscriber) Resume(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cc != nil {
		return nil
	}
	cc, err := s.c.Consume(func(m jetstream.Msg) {
		e, err := wire.DecodeEvent(m.Data())
		if err != nil {
			e = match.Event{} // counted as wrong
		}
		s.deliver(e)
		m.Ack()
	})
	if err != nil {
		return fmt.Errorf("jetstream: consume: %w", err)
	}
	s.cc = cc
	return nil
}

func (s *jsSubscriber) Pause() error {
	s.mu.Lock()
	cc := s.cc
	s.cc = nil
	s.mu.Unlock()
	if cc == nil {
		return nil
	}
	cc.Drain()
	<-cc.Closed()
	return nil
}

func (s *jsSubscriber) Close() error { return s.Pause() }

// Close closes the clients and shuts the server down.
func (jc *jsCluster) Close() error {
	jc.mu.Lock()
	conns := jc.conns
	jc.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	for _, s := range jc.servers {
		s.Shutdown()
	}
	for _, s := range jc.servers {
		s.WaitForShutdown()
	}
	return nil
}
