// Command siftd is the Sift router daemon: it accepts clients over QUIC
// (mutual TLS with the deployment's certificates), routes their events to
// matching subscriptions, and serves Prometheus metrics, a health check and
// a subscription summary.
//
//	siftd --name NAME --listen HOST:PORT --certs DIR --data DIR
//	      [--metrics HOST:PORT] [--peer HOST:PORT ...] [--table shallow|poset|forest]
//	      [--pubend NAME[=ROUTER] ...] [--member ROUTER ...] [--max-retain DURATION] [--drop-after DURATION]
//	      [--gc-percent N] [--memory-limit SIZE|auto|off] [--config FILE]
//	      [--http HOST:PORT [--http-tls] [--http-tokens FILE] [--http-insecure]]
//
// It logs with log/slog (text, to stderr); the line `msg="router ready"`
// carries the bound address, so scripts can wait for it. Each --peer is
// dialled and kept linked (redialled with backoff); a link logs
// `msg="link up"` with `link=PEERNAME` on both sides, or `msg="link
// refused"` with the reason. Subscriptions travel over links pruned by
// covering (--table shallow|poset|forest), events are filtered at every hop, and
// a client's subscribe is acknowledged once every router it must reach
// installed it. --http serves the HTTP gateway and dashboard
// (router/httpapi, docs/http.md); the line `msg="http ready"` carries its
// address. SIGINT or SIGTERM shut it down gracefully.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sift-pubsub/sift/internal/buildinfo"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/perm"
	"github.com/spf13/cobra"
)

func main() {
	// siftd logs its own advice on UDP buffer sizes (router.New); silence
	// quic-go's copy of it.
	os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "siftd:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var flags options
	var gc gcFlags
	cmd := &cobra.Command{
		Use:           "siftd --name NAME --listen HOST:PORT --certs DIR --data DIR [--metrics HOST:PORT] [--peer HOST:PORT ...] [--table shallow|poset|forest] [--forward exact|bloom] [--bloom-index sbstree|bftree] [--config FILE]",
		Short:         "Run a Sift router",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// SIGHUP reloads (reload.go); catch it from the start, so that
			// one sent while siftd starts does not kill it.
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil { // daemon.go
				return err
			}
			opts, err := resolve(flags, cmd.Flags().Changed)
			if err != nil {
				return err
			}
			level := new(slog.LevelVar)
			l, err := parseLevel(opts.LogLevel)
			if err != nil {
				return err
			}
			level.Set(l)
			log, err := newLogger(stderr, opts.LogFormat, level)
			if err != nil {
				return err
			}
			slog.SetDefault(log)
			gcs, err := gc.resolve(cmd.Flags().Changed, os.Getenv, machineMemory)
			if err != nil {
				return err
			}
			gcs.apply()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// A reload re-reads the config file for the log level (flags
			// and SIFT_* variables still win).
			relevel := func() {
				o, err := resolve(flags, cmd.Flags().Changed)
				if err == nil {
					var l slog.Level
					if l, err = parseLevel(o.LogLevel); err == nil {
						if l != level.Level() {
							log.Info("log level changed", "from", level.Level().String(), "to", l.String())
						}
						level.Set(l)
						return
					}
				}
				log.Error("reload failed: log level kept", "err", err)
			}
			return run(ctx, opts, hup, relevel)
		},
	}
	cmd.Version = buildinfo.Read().String()
	cmd.SetVersionTemplate("siftd {{.Version}}\n")
	f := cmd.Flags()
	f.StringVar(&flags.LogFormat, "log-format", "text", "log format on standard error: text or json (one JSON object a line)")
	f.StringVar(&flags.LogLevel, "log-level", "info", "least level logged: debug, info, warn or error (the --config file's log_level is re-read on SIGHUP)")
	f.DurationVar((*time.Duration)(&flags.ShutdownGrace), "drain-timeout", 2*time.Second, "on SIGTERM or SIGINT: stop accepting, route what was read, and wait this long at most for queued deliveries to drain before closing connections")
	f.StringVar(&flags.Name, "name", "", "router name (required)")
	f.StringVar(&flags.Listen, "listen", "127.0.0.1:4433", "UDP address to listen on, HOST:PORT (port 0: any free port)")
	f.StringVar(&flags.Certs, "certs", "", "certificates folder holding ca.pem, node.pem and node-key.pem, as written by sift certs issue --router NAME (or --tls-cert, --tls-key and --tls-ca)")
	f.StringVar(&flags.TLSCert, "tls-cert", "", "the router's certificate file, e.g. cert-manager's tls.crt (with --tls-key and --tls-ca, instead of --certs)")
	f.StringVar(&flags.TLSKey, "tls-key", "", "the router's private key file, e.g. tls.key")
	f.StringVar(&flags.TLSCA, "tls-ca", "", "the CA bundle the router trusts, e.g. ca.crt")
	f.StringVar(&flags.Data, "data", "", "data folder for persistent state (required)")
	f.StringVar(&flags.Permissions, "permissions", "", `permissions file: a JSON object mapping client names (from their certificates) to a publish and a subscribe filter, {"alice": {"publish": FILTER, "subscribe": FILTER}}; a subscription must be covered by the subscribe filter, an event must match the publish filter, an unlisted client may do nothing (reloaded on SIGHUP)`)
	f.StringVar(&flags.Metrics, "metrics", "", "HTTP address for /metrics, /healthz and /debug/subscriptions")
	f.StringArrayVar(&flags.Peers, "peer", nil, "a router to link with, HOST:PORT (repeatable); redialled with backoff")
	f.IntVar(&flags.MaxSubscriptionsPerConn, "max-subscriptions-per-conn", 0, "bound on each client connection's subscriptions (0: the router's default, 100000); announced to clients, sift sub --filters spreads larger files over several connections")
	f.StringVar(&flags.Table, "table", "", "routing table structure for links: shallow (cheap inserts at 10^5-10^6 subscriptions; no --rto/--ff), poset or forest (default: shallow, or poset with --rto or --ff)")
	f.BoolVar(&flags.Merge, "merge", false, "perfect merging of the filters forwarded to each neighbour router: several filters go as their merge when it matches exactly their union (fewer filters upstream; linked routers need not agree)")
	f.StringVar(&flags.Forward, "forward", "exact", "event forwarding between routers: exact, or bloom (summaries; linked routers must agree)")
	f.StringVar(&flags.BloomIndex, "bloom-index", "sbstree", "Bloom forwarding index over each link's filters: sbstree or bftree")
	addDurableFlags(f, &flags)
	addAssistFlags(f, &flags)
	addGCFlags(f, &gc)
	addHTTPFlags(f, &flags.httpOptions)
	f.StringVar(&flags.configFile, "config", "", "JSON configuration file; flags override it")
	return cmd
}

// run starts the metrics endpoint and the router, and serves until ctx is
// done.
func run(ctx context.Context, opts options, hup <-chan os.Signal, relevel func()) error {
	log := slog.Default()
	log.Info("siftd starting", "version", buildinfo.Read().String())
	store, err := certs.Open(opts.certPaths(), certs.Node)
	if err != nil {
		return err
	}
	if id := store.Identity(); !id.Admits(opts.Name) {
		return fmt.Errorf("--name %s differs from the router name %q in %s; issue this router its own certificate (sift certs issue --router %s)", opts.Name, id.Name, opts.certPaths().Cert, opts.Name)
	} else if id.Name == certs.AnyRouter {
		log.Warn("development certificate: it names no router, so any holder of its key may link as any router; issue per-router certificates for a deployment (sift certs issue --router NAME)", "cert", opts.certPaths().Cert)
	}
	cfg := opts.routerConfig()
	if cfg.Durable, err = opts.durableConfig(); err != nil {
		return err
	}
	cfg.Logger = log
	if opts.Permissions != "" {
		if cfg.Permissions, err = perm.Load(opts.Permissions); err != nil {
			return err
		}
		log.Info("permissions loaded", "file", opts.Permissions, "clients", len(cfg.Permissions.Clients()))
	}
	cfg.TLS = store.ServerConfig(func(err error) {
		log.Warn("refused a client certificate", "err", err)
	})
	cfg.PeerTLS = store.ClientConfig()
	r, err := router.New(cfg)
	if err != nil {
		return err
	}
	r.Metrics().Registry.MustRegister(buildinfo.Collector(buildinfo.Read()))
	conns := newHTTPConns()
	stopReload := onReload(log, hup, func() { relevel(); reload(log, store, opts.Permissions, r, conns) })
	defer stopReload()
	if opts.Metrics != "" {
		ln, err := net.Listen("tcp", opts.Metrics)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		srv := &http.Server{Handler: r.Handler()}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server", "err", err)
			}
		}()
		defer srv.Close()
		log.Info("metrics ready", "addr", ln.Addr().String())
	}
	stopHTTP, err := startHTTP(log, opts, r, store, conns)
	if err != nil {
		return err
	}
	defer stopHTTP()
	return r.Serve(ctx)
}
