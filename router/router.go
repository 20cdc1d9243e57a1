package router

import (
	"context"
	"errors"
	"fmt"
	"github.com/sift-pubsub/sift/router/core"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/perm"
)

// Router is one Sift router: a QUIC listener for clients, a matching loop
// and a bounded writer per connection. Create it with New, run it with
// Serve.
type Router struct {
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	udp     *net.UDPConn
	tr      *quic.Transport
	ln      *quic.Listener
	loop    *matchLoop
	durable *durableNode // nil: durable delivery off

	in        chan loopMsg
	inMu      sync.RWMutex
	inClosed  bool
	stopInput chan struct{}

	perms     atomic.Pointer[perm.Table] // permissions.go; nil: all allowed
	nextIface atomic.Uint64
	ready     chan struct{}
	served    atomic.Bool
	draining  atomic.Bool // Serve's context ended: /readyz answers 503
}

// New validates cfg, loads (or creates) the stateless-reset key in the
// data folder, and binds the UDP socket, with one quic.Transport for it.
// The router accepts connections once Serve runs.
func New(cfg Config) (*Router, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	key, err := loadResetKey(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	idx, err := match.NewIndex(cfg.Index)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	addr, err := net.ResolveUDPAddr("udp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("router: listen address: %w", err)
	}
	adviseUDPBuffers(cfg.Logger)
	udp, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	tr := &quic.Transport{Conn: udp, StatelessResetKey: key}
	ln, err := tr.Listen(cfg.TLS, quicConfig(cfg))
	if err != nil {
		udp.Close()
		return nil, fmt.Errorf("router: listen: %w", err)
	}
	r := &Router{
		cfg:       cfg,
		log:       cfg.Logger.With("router", cfg.Name),
		metrics:   cfg.Metrics,
		udp:       udp,
		tr:        tr,
		ln:        ln,
		in:        make(chan loopMsg, 1024),
		stopInput: make(chan struct{}),
		ready:     make(chan struct{}),
	}
	eng := core.NewEngine(idx, cfg.MaxSubscriptionsPerConn)
	lk, err := newLinks(cfg, eng)
	if err != nil {
		ln.Close()
		udp.Close()
		return nil, fmt.Errorf("router: %w", err)
	}
	if cfg.Durable != nil {
		if r.durable, err = newDurableNode(cfg, r.metrics); err != nil {
			ln.Close()
			udp.Close()
			return nil, fmt.Errorf("router: %w", err)
		}
	}
	r.loop = &matchLoop{eng: eng, conns: make(map[ifaceID]*conn), metrics: r.metrics, links: lk}
	r.loop.timer.on = true
	r.perms.Store(cfg.Permissions)
	return r, nil
}

// quicConfig is the QUIC configuration shared by the router's listener:
// keep-alives and idle timeout from cfg, windows large enough for batches.
func quicConfig(cfg Config) *quic.Config {
	return &quic.Config{
		HandshakeIdleTimeout:           cfg.HandshakeTimeout,
		MaxIdleTimeout:                 cfg.IdleTimeout,
		KeepAlivePeriod:                cfg.KeepAlive,
		InitialStreamReceiveWindow:     6 << 20,
		MaxStreamReceiveWindow:         6 << 20,
		InitialConnectionReceiveWindow: 15 << 20,
		MaxConnectionReceiveWindow:     15 << 20,
		MaxIncomingStreams:             4,
		MaxIncomingUniStreams:          -1,
	}
}

// Addr returns the UDP address the router listens on.
func (r *Router) Addr() net.Addr { return r.udp.LocalAddr() }

// Name returns the router's name.
func (r *Router) Name() string { return r.cfg.Name }

// Metrics returns the router's metrics.
func (r *Router) Metrics() *Metrics { return r.metrics }

// Ready is closed once the router accepts clients.
func (r *Router) Ready() <-chan struct{} { return r.ready }

// Serve accepts clients and routes their events until ctx is done, then
// shuts down gracefully: it stops accepting and reading, routes every
// event already read, lets queued deliveries drain for up to
// Config.ShutdownGrace, and closes connections with CodeShutdown. It
// returns nil after a shutdown caused by ctx.
func (r *Router) Serve(ctx context.Context) error {
	if r.served.Swap(true) {
		return errors.New("router: Serve called twice")
	}
	loopDone := make(chan struct{})
	go func() {
		r.loop.run(r.in)
		close(loopDone)
	}()
	stopDurable := r.startDurable()
	connCtx, cancelConns := context.WithCancel(context.Background())
	defer cancelConns()
	var wg sync.WaitGroup
	close(r.ready) // before the log line scripts wait for: /readyz agrees with it
	r.log.Info("router ready", "addr", r.Addr().String(), "index", r.cfg.Index, "max_links", r.cfg.MaxLinks)
	dialCtx, stopDialling := context.WithCancel(ctx)
	defer stopDialling()
	for _, peer := range r.cfg.Peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.keepLinked(dialCtx, connCtx, peer)
		}()
	}
	go func() {
		<-ctx.Done()
		r.draining.Store(true)
		r.log.Info("draining", "grace", r.cfg.ShutdownGrace)
		r.ln.Close()
	}()
	for {
		qc, err := r.ln.Accept(ctx)
		if err != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.handle(connCtx, qc)
		}()
	}
	stopDialling()
	r.shutdown(loopDone)
	cancelConns()
	wg.Wait()
	stopDurable()
	r.tr.Close()
	r.udp.Close()
	r.log.Info("router stopped")
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("router: listener closed")
}

// shutdown stops input, lets the loop route what it holds, and then, per
// connection, has the writers send everything queued, an Error frame with
// CodeShutdown and the end of both streams; a client that has read it all
// closes the connection. Connections still open after ShutdownGrace are
// closed with CodeShutdown.
func (r *Router) shutdown(loopDone <-chan struct{}) {
	r.log.Info("shutting down")
	close(r.stopInput)
	r.inMu.Lock()
	r.inClosed = true
	close(r.in)
	r.inMu.Unlock()
	<-loopDone
	bye := wire.AppendFrame(nil, &wire.Error{Code: wire.CodeShutdown, Msg: "router shutting down"})
	for _, c := range r.loop.conns { // the loop has exited: safe to read
		c.q.pushControl(bye)
		c.q.startFinish()
	}
	grace := time.NewTimer(r.cfg.ShutdownGrace)
	defer grace.Stop()
	for _, c := range r.loop.conns {
		select {
		case <-c.qc.Context().Done():
		case <-grace.C:
			grace.Reset(0)
		}
		c.fail(wire.CodeShutdown, "router shutting down")
	}
}

// query runs f inside the matching loop with read access to the
// subscription table, and waits for it; it fails once the router stops.
func (r *Router) query(ctx context.Context, f func(*matchLoop)) error {
	done := make(chan struct{})
	if !r.send(ctx, loopMsg{query: func(l *matchLoop) { f(l); close(done) }}) {
		return errors.New("router is not running")
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SubscriptionSummary describes the router's subscriptions for
// /debug/subscriptions.
type SubscriptionSummary struct {
	Router        string             `json:"router"`
	Index         string             `json:"index"`
	Subscriptions int                `json:"subscriptions"`
	Interfaces    []InterfaceSummary `json:"interfaces"`
}

// Subscriptions returns a summary of the installed subscriptions, with
// every filter when withFilters is set.
func (r *Router) Subscriptions(ctx context.Context, withFilters bool) (SubscriptionSummary, error) {
	s := SubscriptionSummary{Router: r.cfg.Name, Index: r.cfg.Index}
	err := r.query(ctx, func(l *matchLoop) {
		s.Subscriptions = l.eng.Subscriptions()
		s.Interfaces = l.eng.Summary(withFilters)
	})
	return s, err
}
