package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/sift-pubsub/sift/bench/durablebench"
)

type benchDurableOptions struct {
	peer, out, profile                             string
	hops, shbs, subs, groups, publishers           int
	inFlight, events, payload, latencyEvents       int
	catchupEvents, ackEvery, subQueue, runs        int
	replicas                                       int
	rate                                           float64
	seed                                           uint64
	disconnectEvery, disconnectFor, stall, ackIdle time.Duration
	restartSHB, quiet                              bool
}

func init() {
	var o benchDurableOptions
	cmd := &cobra.Command{
		Use:   "durable [--peer jetstream] [--subs N] [--hops N] [--shbs 1|2]",
		Short: "Durable publish and delivery through PHB - SHB, against JetStream",
		Long: `Durable starts Sift routers with durable delivery on (in this process,
linked over QUIC on loopback, Pebble stores in a temporary folder with real
fsync): pubend "p" at r0 (the PHB), a chain of --hops routers to the SHB, and
with --shbs 2 a second SHB beside the first. --subs durable subscribers (each
matching one of --groups groups of events) spread over the SHBs, and
--publishers durable publishers at the PHB each keeping --in-flight publishes
unacknowledged. Every delivery is checked: each subscriber must get exactly its
group's events, each once.

Phases of each run: throughput (--events as fast as the publishers go, with
subscribers disconnecting for --disconnect-for every --disconnect-every if
set, staggered); latency (--latency-events at --rate, one at a time); catch-up
(--catchup-events published while every subscriber is away, or while the SHB
router is stopped with --restart-shb, then all come back at once).

Reported: acknowledged publishes/s, delivered events/s, CPU microseconds per
delivered event (whole process), publish-to-deliver latency p50/p99/p999, the
catch-up delivery rate.

With --peer jetstream, an embedded nats-server with JetStream (file storage,
sync_interval always, so it fsyncs before acknowledging as Sift does) runs the
same events, publishers (PublishAsync, same in-flight bound) and durable pull
consumers, alternating with Sift run by run. It is compiled only into binaries
built with the natspeer tag: go build -tags natspeer -o sift ./cmd/sift

The table goes to stdout; results.json (with the machine and this command),
results.csv and PNG plots go to --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchDurable(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.peer, "peer", durablebench.PeerNone, "peer run alongside: none or jetstream (needs -tags natspeer)")
	f.IntVar(&o.hops, "hops", 2, "routers on the PHB-to-SHB path, both included (5: PHB, 3 intermediate, SHB)")
	f.IntVar(&o.shbs, "shbs", 1, "SHBs (1 or 2); subscribers are spread over them")
	f.IntVar(&o.subs, "subs", 100, "durable subscribers")
	f.IntVar(&o.groups, "groups", 10, "event groups; each subscriber matches one (1/groups of the events)")
	f.IntVar(&o.publishers, "publishers", 100, "durable publishers at the PHB")
	f.IntVar(&o.inFlight, "in-flight", 64, "unacknowledged publishes each publisher keeps")
	f.IntVar(&o.events, "events", 20_000, "events of the throughput phase")
	f.IntVar(&o.payload, "payload", 200, "bytes of each event's payload attribute")
	f.DurationVar(&o.disconnectEvery, "disconnect-every", 0, "each subscriber disconnects this often in the throughput phase (seed: 30s)")
	f.DurationVar(&o.disconnectFor, "disconnect-for", 0, "for this long each time (seed: 5s)")
	f.IntVar(&o.latencyEvents, "latency-events", 2000, "events of the latency phase")
	f.Float64Var(&o.rate, "rate", 100, "events/s of the latency phase")
	f.IntVar(&o.catchupEvents, "catchup-events", 0, "backlog of the catch-up phase (0: no catch-up phase)")
	f.BoolVar(&o.restartSHB, "restart-shb", false, "catch-up phase: stop and restart the SHB router instead of disconnecting subscribers (Sift only)")
	f.IntVar(&o.ackEvery, "ack-every", 64, "messages a subscriber consumes between acknowledgements")
	f.DurationVar(&o.ackIdle, "ack-idle", 20*time.Millisecond, "a subscriber also acknowledges this long after its last acknowledgement (Sift)")
	f.IntVar(&o.subQueue, "sub-queue", 0, "Sift: unacknowledged events per subscriber session (0: router default)")
	f.IntVar(&o.replicas, "replicas", 0, "replicate the pubend with Raft on this many routers (and the peer's stream on as many servers), run alongside the unreplicated Sift (0: not replicated)")
	f.IntVar(&o.runs, "runs", 3, "alternating runs of every system")
	f.Uint64Var(&o.seed, "seed", 1, "payload seed")
	f.DurationVar(&o.stall, "stall", time.Minute, "fail a run when no delivery arrives for this long")
	f.StringVar(&o.profile, "cpuprofile", "", "write CPU profiles of each run's throughput, latency and catch-up phases into DIR")
	f.StringVar(&o.out, "out", "bench-durable-out", "directory for results and plots")
	f.BoolVar(&o.quiet, "quiet", false, "no progress bar or messages on stderr")
	benchParentCmd().AddCommand(cmd)
}

func runBenchDurable(ctx context.Context, stdout, stderr io.Writer, o benchDurableOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if addr := os.Getenv("SIFT_PPROF"); addr != "" {
		go http.ListenAndServe(addr, nil)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	peer, err := durablebench.PeerSystems(o.peer)
	if err != nil {
		return fmt.Errorf("bench durable: %w", err)
	}
	systems := append([]durablebench.System{durablebench.Sift{SubQueue: o.subQueue}}, peer...)
	switch {
	case o.replicas < 0 || o.replicas == 1 || o.replicas > 7:
		return fmt.Errorf("bench durable: --replicas %d: want 0 (not replicated) or 2-7", o.replicas)
	case o.replicas > 1:
		systems = durablebench.WithReplicas(systems, o.replicas)
	}
	cfg := durablebench.Config{
		Systems:  systems,
		Topology: durablebench.Topology{Hops: o.hops, SHBs: o.shbs}, Subscribers: o.subs, Groups: o.groups,
		Publishers: o.publishers, InFlight: o.inFlight, Events: o.events, Payload: o.payload,
		Churn:         durablebench.Churn{Every: o.disconnectEvery, For: o.disconnectFor},
		LatencyEvents: o.latencyEvents, Rate: o.rate, CatchupEvents: o.catchupEvents, RestartSHB: o.restartSHB,
		AckEvery: o.ackEvery, AckIdle: o.ackIdle, Runs: o.runs, Stall: o.stall, Seed: o.seed, ProfileDir: o.profile, Command: commandLine(),
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("bench durable: %w", err)
	}
	bar := newBenchBar(stderr, o.quiet, "bench durable")
	cfg.Progress = bar.runs("")
	rep, err := durablebench.Run(ctx, cfg)
	bar.finish()
	if err != nil {
		return fmt.Errorf("bench durable: %w", err)
	}
	if err := writeBenchReport(stdout, stderr, rep, o.out, o.quiet); err != nil {
		return fmt.Errorf("bench durable: %w", err)
	}
	return nil
}
