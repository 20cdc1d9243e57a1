package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sift-pubsub/sift/bench"
	"github.com/sift-pubsub/sift/bench/httpbench"
)

func init() {
	var cfg httpbench.Config
	var out string
	cmd := &cobra.Command{
		Use:   "http [--subscribers N] [--publish-events N] [--deliver-events N]",
		Short: "The HTTP gateway of a siftd process: JSON Lines publishing, idle SSE memory, SSE delivery",
		Long: `Http starts siftd (the binary beside this one, or --siftd) with --http
and measures its gateway from this process over loopback TCP:

  publish: --publish-events events as JSON Lines bodies of --batch events,
           --posters at a time, no subscriber; events/s and siftd CPU per event;
  idle:    --subscribers Server-Sent Events streams (stream i filters
           g == i % --groups), each acknowledged; siftd's resident memory and
           Go heap plus stacks per idle stream;
  deliver: --deliver-events events in random groups while every stream
           counts its data: lines; SSE messages delivered per second in
           aggregate and siftd CPU per delivery.

The figures go to stdout and --out/results.json (with the machine and the load).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			cfg.Sift = self
			if cfg.Siftd == "" {
				cfg.Siftd = filepath.Join(filepath.Dir(self), "siftd")
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			load := bench.LoadAverage()
			res, err := httpbench.Run(ctx, cfg, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if out == "" {
				return nil
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			data, _ := json.MarshalIndent(struct {
				Machine   bench.Machine
				Load      float64
				LoadAfter float64
				Result    httpbench.Result
			}{bench.CurrentMachine(), load, bench.LoadAverage(), res}, "", "  ")
			fmt.Fprintf(cmd.OutOrStdout(), "load average %.2f before, %.2f after\n", load, bench.LoadAverage())
			return os.WriteFile(filepath.Join(out, "results.json"), data, 0o644)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Siftd, "siftd", "", "the siftd binary (default: siftd beside this binary)")
	f.StringArrayVar(&cfg.SiftdFlags, "siftd-flag", nil, "an extra siftd flag (repeatable), e.g. --siftd-flag=--gc-percent=100")
	f.IntVar(&cfg.PublishEvents, "publish-events", 500000, "events of the publish phase")
	f.IntVar(&cfg.Batch, "batch", 5000, "events per JSON Lines body")
	f.IntVar(&cfg.Posters, "posters", 4, "concurrent publishers")
	f.IntVar(&cfg.Subscribers, "subscribers", 10000, "concurrent SSE streams")
	f.IntVar(&cfg.Groups, "groups", 100, "groups of streams (each event matches subscribers/groups streams)")
	f.IntVar(&cfg.DeliverEvents, "deliver-events", 20000, "events of the delivery phase")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the events' groups")
	f.StringVar(&out, "out", "", "folder for results.json (none: stdout only)")
	benchParentCmd().AddCommand(cmd)
}
