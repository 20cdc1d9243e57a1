//go:build natspeer

package netbench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/certs"
)

// This file is compiled only with the build tag natspeer, so that the
// default build, the tests and the demo never compile nats-server.

func init() {
	RegisterPeer(PeerNATS, func() []System { return []System{NATS{}, NATS{TLS: true}} })
}

// NATS is a cluster of embedded nats-server servers (github.com/nats-io/
// nats-server/v2 as a library) with github.com/nats-io/nats.go clients.
// Events travel as Sift's binary event encoding on subject trades.SYMBOL;
// a subscriber on the wildcard trades.> decodes every event and applies
// its filter in the application, as NATS's maintainers advise for content
// they cannot express as subjects. With TLS, clients and routes use TLS
// 1.3 with client certificates from the same kind of deployment CA as
// Sift's.
type NATS struct{ TLS bool }

// Name is "nats" or "nats-tls".
func (n NATS) Name() string {
	if n.TLS {
		return "nats-tls"
	}
	return "nats"
}

// Start starts the servers one by one, each routing to those before it
// (the cluster gossips itself into a full mesh), and waits until every
// server has a route to every other.
func (n NATS) Start(ctx context.Context, routers int, dir string) (Cluster, error) {
	nc := &natsCluster{}
	if n.TLS {
		var err error
		if nc.serverTLS, nc.routeTLS, nc.clientTLS, err = natsTLS(filepath.Join(dir, "certs")); err != nil {
			return nil, err
		}
	}
	for i := range routers {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i),
			Host:       "127.0.0.1",
			Port:       server.RANDOM_PORT,
			NoLog:      true,
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: server.RANDOM_PORT},
		}
		if n.TLS {
			opts.TLS, opts.TLSVerify, opts.TLSConfig, opts.TLSTimeout = true, true, nc.serverTLS, 5
			opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = nc.routeTLS, 5
		}
		for _, s := range nc.servers {
			opts.Routes = append(opts.Routes, &url.URL{Scheme: "nats-route", Host: s.ClusterAddr().String()})
		}
		s, err := server.NewServer(opts)
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("nats: server %d: %w", i, err)
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			s.Shutdown()
			nc.Close()
			return nil, fmt.Errorf("nats: server %d not ready", i)
		}
		nc.servers = append(nc.servers, s)
	}
	if err := nc.waitRoutes(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// natsTLS builds TLS 1.3 configurations with mutual authentication from a
// fresh Sift deployment CA: for the client port, for routes (which both
// accept and dial), and for clients.
func natsTLS(certDir string) (srv, route, cli *tls.Config, err error) {
	if err := certs.Init(certDir, nil); err != nil {
		return nil, nil, nil, fmt.Errorf("nats: %w", err)
	}
	node, err := certs.Load(certDir, certs.Node)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("nats: %w", err)
	}
	cl, err := certs.Load(certDir, certs.Client)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("nats: %w", err)
	}
	base := func(cert tls.Certificate, pool *x509.CertPool) *tls.Config {
		return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, RootCAs: pool, ClientCAs: pool,
			ClientAuth: tls.RequireAndVerifyClientCert}
	}
	return base(node.Cert, node.CAs), base(node.Cert, node.CAs), base(cl.Cert, cl.CAs), nil
}

type natsCluster struct {
	servers                        []*server.Server
	conns                          []*nats.Conn
	serverTLS, routeTLS, clientTLS *tls.Config
}

func (nc *natsCluster) waitRoutes(ctx context.Context) error {
	for i, s := range nc.servers {
		for s.NumRoutes() < len(nc.servers)-1 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("nats: server %d has %d of %d routes: %w", i, s.NumRoutes(), len(nc.servers)-1, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

func (nc *natsCluster) connect(at int, name string) (*nats.Conn, error) {
	if at < 0 || at >= len(nc.servers) {
		return nil, fmt.Errorf("nats: no server %d of %d", at, len(nc.servers))
	}
	opts := []nats.Option{nats.Name(name), nats.NoReconnect()}
	if nc.clientTLS != nil {
		opts = append(opts, nats.Secure(nc.clientTLS))
	}
	c, err := nats.Connect(nc.servers[at].ClientURL(), opts...)
	if err != nil {
		return nil, fmt.Errorf("nats: connect %s: %w", name, err)
	}
	nc.conns = append(nc.conns, c)
	return c, nil
}

// Subscribe subscribes on sub.Subject; on the wildcard subject the
// handler filters every event in the application. It returns once the
// first server (where publishers connect) has interest in the subject.
func (nc *natsCluster) Subscribe(ctx context.Context, at int, sub workload.NetSub, deliver func(match.Event)) error {
	c, err := nc.connect(at, fmt.Sprintf("sub-%d", len(nc.conns)))
	if err != nil {
		return err
	}
	filterInApp := strings.HasSuffix(sub.Subject, ">")
	var dec wire.EventDecoder // reused: nats.go calls the handler from one goroutine
	_, err = c.Subscribe(sub.Subject, func(m *nats.Msg) {
		e, err := dec.DecodeEvent(m.Data)
		if err != nil {
			deliver(match.Event{}) // counted as wrong
			return
		}
		if filterInApp && !sub.Filter.Matches(e) {
			return
		}
		deliver(e)
	})
	if err != nil {
		return fmt.Errorf("nats: subscribe %s: %w", sub.Subject, err)
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	probe := strings.Replace(sub.Subject, ">", "probe", 1)
	for !nc.servers[0].GlobalAccount().SubscriptionInterest(probe) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("nats: interest in %s never reached server 0: %w", sub.Subject, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

func (nc *natsCluster) Publisher(_ context.Context, at int, _ bool) (Publisher, error) {
	c, err := nc.connect(at, fmt.Sprintf("pub-%d", len(nc.conns)))
	if err != nil {
		return nil, err
	}
	return &natsPublisher{c: c}, nil
}

// natsPublisher encodes events as Sift's wire encoding; nats.go buffers
// and its flusher writes as soon as it can, batching under load.
type natsPublisher struct {
	c   *nats.Conn
	buf []byte
}

func (p *natsPublisher) Publish(_ context.Context, e match.Event) error {
	p.buf = wire.AppendEvent(p.buf[:0], e)
	return p.c.Publish(workload.NetSubject(e), p.buf)
}

// Flush waits for the server's PONG (nats.go wants a deadline for that).
func (p *natsPublisher) Flush(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.c.FlushWithContext(ctx)
}

// WireBytes reads the kernel's bytes_sent of every TCP socket on a
// client or cluster port of the servers: NATS protocol bytes, plus TLS
// records in nats-tls.
func (nc *natsCluster) WireBytes() (int64, string, bool) {
	var ports []uint16
	for _, s := range nc.servers {
		if a, ok := s.Addr().(*net.TCPAddr); ok {
			ports = append(ports, uint16(a.Port))
		}
		ports = append(ports, uint16(s.ClusterAddr().Port))
	}
	n, err := TCPBytesSent(ports)
	if err != nil {
		return 0, "", false
	}
	layer := "TCP payload (NATS protocol)"
	if nc.clientTLS != nil {
		layer = "TCP payload (TLS records of the NATS protocol)"
	}
	return n, layer, true
}

// Close closes the clients and shuts the servers down.
func (nc *natsCluster) Close() error {
	for _, c := range nc.conns {
		c.Close()
	}
	for _, s := range nc.servers {
		s.Shutdown()
	}
	for _, s := range nc.servers {
		s.WaitForShutdown()
	}
	return nil
}
