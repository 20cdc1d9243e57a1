package httpapi

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
)

// Config configures a Gateway. Zero fields take the documented defaults.
type Config struct {
	// Router is the router the gateway serves; required. The gateway
	// dials its QUIC listener as a client and reads its state for
	// /v1/status.
	Router *router.Router
	// TLS is the client TLS configuration the gateway dials the router
	// with (the deployment's client certificate); required.
	TLS *tls.Config
	// Pubend is the pubend ?durable=1 publishes to; default the router's
	// name (siftd's default pubend).
	Pubend string
	// Tokens maps bearer tokens to client names (LoadTokens). When set,
	// every /v1 request must carry "Authorization: Bearer TOKEN" (or, for
	// EventSource, which cannot set headers, ?access_token=TOKEN); the
	// dashboard page itself is public, its data is not. Nil: no bearer
	// authentication (mutual TLS or a loopback listener protect the
	// gateway instead; requests then act as the client their TLS
	// certificate names, or as client "http").
	Tokens map[string]string
	// Origins are the web origins (scheme://host[:port]) whose pages may
	// call the API from a browser (CORS). Requests carrying another
	// Origin than the gateway's own are refused (403), so that a foreign
	// page cannot make a visitor's browser publish or subscribe.
	Origins []string
	// Permit decides what a client may publish and subscribe to; nil
	// defers to the router's permissions table (Router.Permissions,
	// siftd --permissions, looked up per request so that a reload
	// applies), and allows everything when the router has none.
	Permit Permit
	// Heartbeat is the period of the SSE comment lines that keep proxies
	// from closing idle streams; default 15s.
	Heartbeat time.Duration
	// SubscriberBuffer bounds the events queued for one SSE subscriber
	// and not yet written; beyond it the subscriber is disconnected as a
	// slow consumer. Default 4096.
	SubscriberBuffer int
	// SubscriptionsPerConn is the most plain SSE subscriptions the
	// gateway puts on one client connection to the router; default 4096.
	SubscriptionsPerConn int
	// MaxBody bounds a publish request's body; default 64 MiB.
	MaxBody int64
	// Logger receives the gateway's logs; default discards them.
	Logger *slog.Logger
}

// Permit is the permission check of a client (the name its bearer token
// maps to, or "http"): an error refuses the request (403) and says why.
type Permit interface {
	// Publish checks one event the client publishes.
	Publish(client string, ev match.Event) error
	// Subscribe checks a filter the client subscribes with.
	Subscribe(client string, f match.Filter) error
}

// anonymous is the client name of requests without bearer tokens.
const anonymous = "http"

func (c Config) withDefaults() (Config, error) {
	if c.Router == nil {
		return c, errors.New("httpapi: Config.Router is required")
	}
	if c.TLS == nil {
		return c, errors.New("httpapi: Config.TLS is required")
	}
	if c.Pubend == "" {
		c.Pubend = c.Router.Name()
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.SubscriberBuffer <= 0 {
		c.SubscriberBuffer = 4096
	}
	if c.SubscriptionsPerConn <= 0 {
		c.SubscriptionsPerConn = 4096
	}
	if c.MaxBody <= 0 {
		c.MaxBody = 64 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c, nil
}
