package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	netbench "github.com/sift-pubsub/sift/bench/net"
	"github.com/sift-pubsub/sift/bench/workload"
)

type benchNetOptions struct {
	peer, out, profile                string
	workloads, modes                  []string
	routers, subs, events, publishers int
	window, latencyEvents, runs       int
	seed                              uint64
	rate, selectivity                 float64
	stall, duration                   time.Duration
	quiet                             bool
}

func init() {
	var o benchNetOptions
	cmd := &cobra.Command{
		Use:   "net [--peer nats] [--workload topic,content] [--routers N]",
		Short: "Run publishers and subscribers through a mesh of routers, against a peer broker",
		Long: `Net starts a chain of Sift routers linked over QUIC on loopback, in this
process, connects the subscribers (one filter each) to the last router and the
publishers to the first, and measures throughput (events/s until the last
delivery; each run publishes at least --events and for at least --duration), publish-to-deliver latency (p50, p99, p999; at a low fixed --rate),
CPU seconds and wire bytes per useful delivery. Every delivery is checked
against the subscriber's filter.

With --peer nats, a NATS cluster of the same size (nats-server embedded as a
library, nats.go clients), plain and with TLS, runs the same workload in the
same invocation, alternating with Sift run by run, and the report gives the
ratios the targets are set on. The NATS peer is compiled only into binaries
built with the natspeer tag: go build -tags natspeer -o sift ./cmd/sift

Workloads (each runs on its own, results in --out/WORKLOAD):
  topic    subscriptions symbol == "X" (NATS subject trades.X)
  content  price bands and symbol prefixes with a volume floor (NATS
           subscribers take trades.> and filter in the application)
Each subscriber matches about --selectivity of the events.

The table goes to stdout; results.json (with the machine and this command),
results.csv and PNG plots go to --out/WORKLOAD.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchNet(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.peer, "peer", netbench.PeerNone, "peer broker run alongside: none or nats (needs -tags natspeer)")
	f.StringSliceVar(&o.workloads, "workload", workload.NetKinds(), "workloads: topic, content")
	f.StringSliceVar(&o.modes, "mode", netbench.SiftModes(), "Sift forwarding modes to run")
	f.IntVar(&o.routers, "routers", 3, "routers (servers) in each cluster")
	f.IntVar(&o.subs, "subs", workload.DefaultNetSubscribers, "subscribers, one connection and one filter each")
	f.IntVar(&o.events, "events", 50_000, "fewest events published in the throughput phase (the lap of prebuilt events it cycles over)")
	f.DurationVar(&o.duration, "duration", 2*time.Second, "shortest throughput phase: publishing goes on past --events until it has lasted this long")
	f.IntVar(&o.publishers, "publishers", 1, "publishing connections in the throughput phase")
	f.IntVar(&o.window, "window", 20_000, "most events in flight end to end in the throughput phase")
	f.Float64Var(&o.rate, "rate", 2000, "events/s of the latency phase")
	f.IntVar(&o.latencyEvents, "latency-events", 10_000, "events of the latency phase")
	f.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of each run's throughput phase into DIR/WORKLOAD")
	f.IntVar(&o.runs, "runs", 3, "alternating runs of every system")
	f.Uint64Var(&o.seed, "seed", 1, "workload seed")
	f.Float64Var(&o.selectivity, "selectivity", workload.DefaultNetSelectivity, "share of events each subscriber matches")
	f.DurationVar(&o.stall, "stall", 30*time.Second, "fail a run when no delivery arrives for this long, or when any step of it makes no progress for a quarter longer (the goroutines go to a file the error names)")
	f.StringVar(&o.out, "out", "bench-net-out", "directory for results and plots (one folder per workload)")
	f.BoolVar(&o.quiet, "quiet", false, "no progress bar or messages on stderr")
	benchParentCmd().AddCommand(cmd)
}

func runBenchNet(ctx context.Context, stdout, stderr io.Writer, o benchNetOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	systems, err := benchNetSystems(o)
	if err != nil {
		return fmt.Errorf("bench net: %w", err)
	}
	for _, kind := range o.workloads {
		cfg := netbench.Config{
			Workload: workload.NetConfig{Kind: kind, Subscribers: o.subs, Events: o.events, Selectivity: o.selectivity},
			Seed:     o.seed, Systems: systems, Routers: o.routers, Publishers: o.publishers, Events: o.events,
			Duration: o.duration, Window: o.window, Rate: o.rate, LatencyEvents: o.latencyEvents, Runs: o.runs, Stall: o.stall,
			Command: commandLine(),
		}
		if o.profile != "" {
			cfg.ProfileDir = filepath.Join(o.profile, kind)
		}
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("bench net: %w", err)
		}
		if err := benchNetWorkload(ctx, stdout, stderr, cfg, filepath.Join(o.out, kind), o.quiet); err != nil {
			return fmt.Errorf("bench net: %s workload: %w", kind, err)
		}
	}
	return nil
}

// benchNetSystems is Sift in each mode, then the peer's systems.
func benchNetSystems(o benchNetOptions) ([]netbench.System, error) {
	var systems []netbench.System
	for _, m := range o.modes {
		systems = append(systems, netbench.Sift{Mode: m})
	}
	peer, err := netbench.PeerSystems(o.peer)
	if err != nil {
		return nil, err
	}
	return append(systems, peer...), nil
}

func benchNetWorkload(ctx context.Context, stdout, stderr io.Writer, cfg netbench.Config, out string, quiet bool) error {
	bar := newBenchBar(stderr, quiet, "bench net")
	cfg.Progress = bar.runs(cfg.Workload.Kind + ": ")
	rep, err := netbench.Run(ctx, cfg)
	bar.finish()
	if err != nil {
		return err
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteFiles(out); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(stderr, "wrote results.json, results.csv and plots to %s\n", out)
	}
	return nil
}
