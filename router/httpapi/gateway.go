package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/sift-pubsub/sift/router/client"
)

// Gateway serves the HTTP API and the dashboard of one router. Create it
// with New, serve Handler on any http.Server, Close it after the server.
type Gateway struct {
	cfg  Config
	addr string // the router's QUIC address, as the gateway dials it
	log  *slog.Logger

	ctx    context.Context // ends at Close: the durable sessions' lifetime
	cancel context.CancelFunc

	pubMu sync.Mutex
	pub   *client.Client           // plain publishing; redialled once it ends
	dpub  *client.DurablePublisher // ?durable=1; dialled on first use

	pool subPool // plain SSE subscriptions (subscribe.go)
	wr   writers // detached HTTP/1 streams (detached.go)
	// sessions maps each durable subscription id to its open stream's
	// session, for POST /v1/ack.
	sessions sync.Map

	stats gatewayStats
}

// gatewayStats are the gateway's counters for /v1/status.
type gatewayStats struct {
	published   atomic.Uint64 // events accepted by POST /v1/publish
	delivered   atomic.Uint64 // SSE messages written (events and gaps)
	subscribers atomic.Int64  // open SSE streams, plain and durable
	durableSubs atomic.Int64  // open durable SSE streams
	slow        atomic.Uint64 // SSE subscribers disconnected as slow consumers
}

// New checks cfg and returns a gateway for cfg.Router; it dials the router
// on first use, so it may be created before the router serves.
func New(cfg Config) (*Gateway, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{cfg: cfg, addr: dialAddr(cfg.Router.Addr()), log: cfg.Logger.With("part", "http"), ctx: ctx, cancel: cancel}
	g.pool.g = g
	return g, nil
}

// dialAddr is the address to dial a listener bound to a: loopback for a
// wildcard address.
func dialAddr(a net.Addr) string {
	ua, ok := a.(*net.UDPAddr)
	if !ok || !ua.IP.IsUnspecified() {
		return a.String()
	}
	ip := net.IPv4(127, 0, 0, 1)
	if ua.IP.To4() == nil {
		ip = net.IPv6loopback
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(ua.Port))
}

// Handler returns the gateway's routes: /v1/publish, /v1/subscribe,
// /v1/ack, /v1/status and the dashboard at /.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/publish", g.auth(g.publish))
	mux.Handle("GET /v1/subscribe", g.auth(g.subscribe))
	mux.Handle("POST /v1/ack", g.auth(g.ack))
	mux.Handle("GET /v1/status", g.auth(g.status))
	for _, p := range []string{"/v1/publish", "/v1/subscribe", "/v1/ack", "/v1/status"} {
		mux.HandleFunc("OPTIONS "+p, g.preflight) // origin.go
	}
	mux.HandleFunc("GET /{$}", g.dashboard)
	return mux
}

// Close ends every SSE stream's router side and closes the gateway's
// connections to the router. Call it after the HTTP server stopped.
func (g *Gateway) Close() error {
	g.cancel()
	g.pubMu.Lock()
	var errs []error
	if g.pub != nil {
		errs = append(errs, ignoreClosed(g.pub.Close()))
		g.pub = nil
	}
	if g.dpub != nil {
		errs = append(errs, ignoreClosed(g.dpub.Close()))
		g.dpub = nil
	}
	g.pubMu.Unlock()
	errs = append(errs, g.pool.close())
	return errors.Join(errs...)
}

func ignoreClosed(err error) error {
	if errors.Is(err, client.ErrClosed) {
		return nil
	}
	return err
}

// options are the client options of the gateway's connections.
func (g *Gateway) options(name string) client.Options {
	return client.Options{TLS: g.cfg.TLS, Name: name}
}

// publisher returns the plain publishing connection, dialling it if there
// is none or the last one ended.
func (g *Gateway) publisher(ctx context.Context) (*client.Client, error) {
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	if g.ctx.Err() != nil {
		return nil, errors.New("the gateway is closed")
	}
	if g.pub != nil {
		select {
		case <-g.pub.Done():
			g.pub = nil
		default:
			return g.pub, nil
		}
	}
	c, err := client.Dial(ctx, g.addr, g.options("http-publish"))
	if err != nil {
		return nil, fmt.Errorf("dial router %s: %w", g.addr, err)
	}
	g.pub = c
	return c, nil
}

// durablePublisher returns the durable publisher of cfg.Pubend, creating
// it on first use (or after it failed).
func (g *Gateway) durablePublisher(ctx context.Context) (*client.DurablePublisher, error) {
	g.pubMu.Lock()
	defer g.pubMu.Unlock()
	if g.ctx.Err() != nil {
		return nil, errors.New("the gateway is closed")
	}
	if g.dpub != nil && g.dpub.Err() == nil {
		return g.dpub, nil
	}
	dp, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{
		DurableOptions: g.durableOptions("http-durable-publish"),
		Pubend:         g.cfg.Pubend,
	})
	if err != nil {
		return nil, fmt.Errorf("durable publisher for pubend %s: %w", g.cfg.Pubend, err)
	}
	g.dpub = dp
	return dp, nil
}

// durableOptions are the connection options of durable sessions.
func (g *Gateway) durableOptions(name string) client.DurableOptions {
	return client.DurableOptions{Options: g.options(name), Routers: []string{g.addr}}
}
