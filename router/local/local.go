// Package local starts a complete router on a loopback port with a fresh
// deployment CA in a folder, and meshes of such routers, for tests, runnable
// examples and sift demo. It is not for production: the CA key sits beside
// the certificates.
package local

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/pprof"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// Env is a running router and what a client needs to reach it.
type Env struct {
	Router    *router.Router
	Addr      string      // HOST:PORT of the router
	CertsDir  string      // the certificates folder
	ClientTLS *tls.Config // a client's TLS configuration
	done      chan error
	cancel    context.CancelFunc
}

// Start writes certificates into dir/certs, starts a router named
// "local" on 127.0.0.1 with its data in dir/data (mod may adjust the
// configuration; logs are discarded unless mod sets a Logger), and waits
// until it accepts clients.
func Start(dir string, mod func(*router.Config)) (*Env, error) {
	certDir := filepath.Join(dir, "certs")
	if err := certs.Init(certDir, nil); err != nil {
		return nil, err
	}
	return StartIn(certDir, filepath.Join(dir, "data"), mod)
}

// StartIn starts a router like Start, with the deployment's existing
// certificates in certDir (so several routers share one CA) and its data
// in dataDir. The router presents the node certificate both to clients
// and, as PeerTLS, to the neighbours it dials.
func StartIn(certDir, dataDir string, mod func(*router.Config)) (*Env, error) {
	node, err := certs.Load(certDir, certs.Node)
	if err != nil {
		return nil, err
	}
	cl, err := certs.Load(certDir, certs.Client)
	if err != nil {
		return nil, err
	}
	cfg := router.Config{
		Name:    "local",
		Listen:  "127.0.0.1:0",
		TLS:     node.ServerConfig(nil),
		PeerTLS: node.ClientConfig(),
		DataDir: dataDir,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if mod != nil {
		mod(&cfg)
	}
	var env *Env
	// Every goroutine the router starts carries its name as a profiler
	// label (ProfileLabel), so a profile of a process with several
	// routers and clients splits by part: go tool pprof -tags.
	pprof.Do(context.Background(), pprof.Labels(ProfileLabel, "router "+cfg.Name), func(ctx context.Context) {
		var r *router.Router
		if r, err = router.New(cfg); err != nil {
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		env = &Env{Router: r, Addr: r.Addr().String(), CertsDir: certDir, ClientTLS: cl.ClientConfig(), done: make(chan error, 1), cancel: cancel}
		go func() { env.done <- r.Serve(ctx) }()
	})
	if err != nil {
		return nil, err
	}
	<-env.Router.Ready()
	return env, nil
}

// ProfileLabel is the profiler label (runtime/pprof) that the goroutines of
// an Env's router and of the clients its Dial connects carry: "router
// NAME" or "client NAME".
const ProfileLabel = "sift"

// Dial connects a client to the router, with opts' TLS set to the
// environment's client certificate.
func (e *Env) Dial(ctx context.Context, name string, opts client.Options) (*client.Client, error) {
	opts.TLS = e.ClientTLS
	opts.Name = name
	var c *client.Client
	var err error
	pprof.Do(ctx, pprof.Labels(ProfileLabel, "client "+name), func(ctx context.Context) {
		c, err = client.Dial(ctx, e.Addr, opts)
	})
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	return c, nil
}

// Stop shuts the router down gracefully and returns Serve's result.
func (e *Env) Stop() error {
	e.cancel()
	return <-e.done
}
