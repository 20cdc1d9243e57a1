package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/sift-pubsub/sift/bench/bloomsweep"
)

type benchBloomOptions struct {
	terms, filters, chains []int
	events, probes, rounds int
	hit                    float64
	minCPU                 time.Duration
	seed                   uint64
	out, index             string
	merge                  []string
	quiet                  bool
}

func init() {
	var o benchBloomOptions
	cmd := &cobra.Command{
		Use:   "bloom [--terms 10,50,200,1000] [--filters 1000,10000,100000] [--routers 3,5,7]",
		Short: "Sweep where Bloom forwarding pays: terms per event, filters per link, chain length",
		Long: `Bloom measures exact against Bloom forwarding on the routers' own data
structures (wire decoding, the exact index, the constraint dictionary, the
per-link trees, the BloomPublish encoding), without the network: for each
point of terms per event (the summary's size) and filters per link, the CPU
per event of the first router and of an inner router in each mode, the link
bytes per delivered event, and the false-positive rate of a filter with one
unmet constraint against (1 - e^(-kn/m))^k; then the whole chain's CPU for
each chain length.

The default sweep takes a few minutes on two cores. The full one:
  sift bench bloom --filters 1000,10000,100000,1000000 --terms 10,20,50,100,200,500,1000
runs longer (a point at 10^6 filters needs about 2 GB and half a minute):
run it in pieces (each point's workload depends only on --seed, its terms
and its filters, so a piece measures the whole sweep's points) and join
them with --merge DIR,DIR,... --out DIR.

The table goes to stdout; results.json (with the machine and this command),
results.csv and PNG plots (inner.png, speedup.png, fprate.png, bytes.png)
go to --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchBloom(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&o.terms, "terms", bloomsweep.DefaultTerms, "terms per event (attributes, all in the dictionary)")
	f.IntSliceVar(&o.filters, "filters", bloomsweep.DefaultFilters, "filters per link")
	f.IntSliceVar(&o.chains, "routers", bloomsweep.DefaultChains, "chain lengths (routers) to combine the per-hop figures for")
	f.IntVar(&o.events, "events", 2000, "distinct events per point")
	f.IntVar(&o.probes, "probes", 8, "one-unmet probe filters per event for the false-positive rate")
	f.IntVar(&o.rounds, "rounds", 3, "alternating rounds of exact and Bloom timing per point")
	f.Float64Var(&o.hit, "hit", 0.1, "share of events some filter of the link matches")
	f.DurationVar(&o.minCPU, "min-cpu", 100*time.Millisecond, "least CPU each role is timed for per round")
	f.Uint64Var(&o.seed, "seed", 1, "workload seed")
	f.StringVar(&o.index, "bloom-index", "sbstree", "per-link tree: sbstree or bftree (as siftd --bloom-index)")
	f.StringVar(&o.out, "out", "bench-bloom-out", "directory for results and plots")
	f.StringSliceVar(&o.merge, "merge", nil, "join the results of sweep pieces (their --out directories) into --out instead of sweeping")
	f.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	benchParentCmd().AddCommand(cmd)
}

func runBenchBloom(ctx context.Context, stdout, stderr io.Writer, o benchBloomOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(o.merge) > 0 {
		return mergeBenchBloom(stdout, stderr, o)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	cfg := bloomsweep.Config{Terms: o.terms, Filters: o.filters, Chains: o.chains, Events: o.events, Probes: o.probes,
		Hit: o.hit, MinCPU: o.minCPU, Rounds: o.rounds, Index: o.index, Seed: o.seed, Command: commandLine()}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("bench bloom: %w", err)
	}
	if !o.quiet {
		// One line per point: the sweep runs for minutes, in a terminal
		// or a log.
		cfg.Progress = func(done, total int, desc string) {
			if desc != "" {
				fmt.Fprintf(stderr, "bench bloom: point %d of %d: %s\n", done+1, total, desc)
			}
		}
	}
	rep, err := bloomsweep.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench bloom: %w", err)
	}
	if err := writeBenchReport(stdout, stderr, rep, o.out, o.quiet); err != nil {
		return fmt.Errorf("bench bloom: %w", err)
	}
	return nil
}

// mergeBenchBloom joins the reports in o.merge (sweep pieces) into o.out.
func mergeBenchBloom(stdout, stderr io.Writer, o benchBloomOptions) error {
	var pieces []*bloomsweep.Report
	for _, dir := range o.merge {
		p, err := bloomsweep.ReadReport(dir)
		if err != nil {
			return fmt.Errorf("bench bloom --merge: %w", err)
		}
		pieces = append(pieces, p)
	}
	rep, err := bloomsweep.Merge(commandLine(), pieces)
	if err != nil {
		return fmt.Errorf("bench bloom: %w", err)
	}
	if err := writeBenchReport(stdout, stderr, rep, o.out, o.quiet); err != nil {
		return fmt.Errorf("bench bloom: %w", err)
	}
	return nil
}
