package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/httpapi"
	"github.com/spf13/pflag"
)

// httpOptions are the HTTP gateway's settings (router/httpapi).
type httpOptions struct {
	HTTP         string   `json:"http"`
	HTTPTLS      bool     `json:"http_tls"`
	HTTPTokens   string   `json:"http_tokens"`
	HTTPInsecure bool     `json:"http_insecure"`
	HTTPOrigins  []string `json:"http_origins"`
}

// addHTTPFlags registers the HTTP gateway flags.
func addHTTPFlags(f *pflag.FlagSet, o *httpOptions) {
	f.StringVar(&o.HTTP, "http", "", "TCP address of the HTTP gateway and dashboard, HOST:PORT: POST /v1/publish, GET /v1/subscribe (Server-Sent Events), GET / (see docs/http.md)")
	f.BoolVar(&o.HTTPTLS, "http-tls", false, "serve --http over TLS (HTTP/2) with the router's certificate, requiring client certificates of the deployment CA (mutual TLS; the client's name is its certificate's common name)")
	f.StringVar(&o.HTTPTokens, "http-tokens", "", "bearer tokens file for --http: one \"TOKEN CLIENT\" pair a line; every /v1 request then needs Authorization: Bearer TOKEN (or ?access_token=)")
	f.StringArrayVar(&o.HTTPOrigins, "http-origin", nil, "a web origin (scheme://host[:port]) whose pages may call the HTTP API from browsers (CORS; repeatable); browser requests from other origins are refused")
	f.BoolVar(&o.HTTPInsecure, "http-insecure", false, "allow --http on a non-loopback address without --http-tls or --http-tokens (anyone who reaches it may publish and subscribe)")
}

// resolveHTTP lets the HTTP flags the user set override the config file,
// and checks them: without TLS or tokens the gateway binds to loopback
// addresses only, unless --http-insecure.
func resolveHTTP(opts *options, flags options, changed func(string) bool) error {
	if changed("http") {
		opts.HTTP = flags.HTTP
	}
	if changed("http-tls") {
		opts.HTTPTLS = flags.HTTPTLS
	}
	if changed("http-tokens") {
		opts.HTTPTokens = flags.HTTPTokens
	}
	if changed("http-insecure") {
		opts.HTTPInsecure = flags.HTTPInsecure
	}
	if changed("http-origin") {
		opts.HTTPOrigins = flags.HTTPOrigins
	}
	if opts.HTTP == "" {
		if opts.HTTPTLS || opts.HTTPTokens != "" || opts.HTTPInsecure {
			return errors.New("--http-tls, --http-tokens and --http-insecure need --http HOST:PORT")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(opts.HTTP)
	if err != nil {
		return fmt.Errorf("--http %q: %w", opts.HTTP, err)
	}
	if !opts.HTTPTLS && opts.HTTPTokens == "" && !opts.HTTPInsecure && !loopbackHost(host) {
		return fmt.Errorf("--http %s is not a loopback address: protect it with --http-tls or --http-tokens, or accept an open gateway with --http-insecure", opts.HTTP)
	}
	return nil
}

// loopbackHost reports whether host names only loopback addresses
// (localhost, 127.0.0.0/8, ::1); an empty host is every interface.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// startHTTP starts the HTTP gateway of r on opts.HTTP once r serves; the
// returned stop function shuts the server down and closes the gateway.
// With --http-tls it serves the certificates of store, the router's, so
// a reload (SIGHUP) changes what new connections present and accept;
// conns tracks the open ones for the reload to revalidate.
func startHTTP(log *slog.Logger, opts options, r *router.Router, store *certs.Store, conns *httpConns) (stop func(), err error) {
	if opts.HTTP == "" {
		return func() {}, nil
	}
	cfg := httpapi.Config{Router: r, TLS: gatewayTLS(store), Logger: log, Origins: opts.HTTPOrigins}
	if opts.HTTPTokens != "" {
		if cfg.Tokens, err = httpapi.LoadTokens(opts.HTTPTokens); err != nil {
			return nil, err
		}
	}
	gw, err := httpapi.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.HTTP)
	if err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	srv := &http.Server{Handler: gw.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelInfo), ConnState: conns.track}
	scheme := "http"
	if opts.HTTPTLS {
		tc := store.ServerConfig(func(err error) { log.Warn("http: refused a client certificate", "err", err) })
		tc.NextProtos = []string{"h2", "http/1.1"}
		tc.MinVersion = tls.VersionTLS12
		srv.TLSConfig = tc
		ln = tls.NewListener(ln, tc)
		scheme = "https"
	}
	go func() {
		<-r.Ready()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "err", err)
		}
	}()
	log.Info("http ready", "addr", ln.Addr().String(), "url", scheme+"://"+ln.Addr().String()+"/", "tls", opts.HTTPTLS, "tokens", opts.HTTPTokens != "")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx) // SSE streams do not end by themselves: Close after the grace
		srv.Close()
		gw.Close()
	}, nil
}

// gatewayTLS is the TLS configuration the gateway dials its router
// with: the router's own certificate (as reloaded), which the router
// admits as a part of itself and exempts from permissions (the gateway
// checks its own users against the router's table, router/httpapi).
func gatewayTLS(store *certs.Store) *tls.Config { return store.ClientConfig() }
