package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sift-pubsub/sift/scribe/sim"
)

func init() {
	var (
		report string
		asJSON bool
		quiet  bool
		opts   sim.Options
	)
	cmd := &cobra.Command{
		Use:   "scribe",
		Short: "Simulate Scribe topic trees over Pastry and report where the load lands",
		Long: `Simulate Scribe over Pastry in a deterministic discrete-event simulator.

Reports (--report):
  sizes    groups per size on 4,096 nodes in the plane (the seed's Example 4)
  state    children tables and entries per node for --group-count groups of --size
  paper    100,000 nodes on a 5,050-router transit-stub topology, 1,500 groups
           of the paper's sizes: delay, node state and link stress against IP
           multicast and naive unicast, with and without the bottleneck remover
  small    30,000 groups of 11 on 50,000 nodes: link stress with and without
           collapsing single-child non-member forwarders
  failure  kill a forwarder or the root of a 64-node tree and report the repair

Zero-valued flags take the report's defaults. The same --seed gives
byte-identical output. Progress goes to stderr unless --json or --quiet.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			if !asJSON && !quiet {
				opts.Progress = func(line string) {
					fmt.Fprintf(cmd.ErrOrStderr(), "[%6.1fs] %s\n", time.Since(start).Seconds(), line)
				}
			}
			rep, err := runScribeReport(report, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return fmt.Errorf("sim scribe: encode %s report: %w", report, err)
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			}
			return rep.WriteText(out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&report, "report", "sizes", "report to run: sizes, state, paper, small or failure")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON (no progress)")
	f.BoolVarP(&quiet, "quiet", "q", false, "print no progress on stderr")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed for every random choice")
	f.IntVar(&opts.Nodes, "nodes", 0, "number of nodes (default: sizes and state 4096, paper 100000, small 50000, failure 64)")
	f.IntVar(&opts.Bits, "id-bits", 0, "id width in bits (default: sizes and state 32, paper and small 128, failure 16)")
	f.IntVar(&opts.B, "b", 0, "bits per digit (default 4; failure: 2)")
	f.IntVar(&opts.Leaf, "leaf", 0, "leaf set size |L| (default 16; failure: 4)")
	f.IntVar(&opts.Neighbours, "neighbours", 0, "neighbourhood set size |M| (default 32; failure: 4)")
	f.IntVar(&opts.Groups, "groups", 0, "sizes: groups per size (default 30); paper: number of groups (default 1500)")
	f.IntSliceVar(&opts.Sizes, "sizes", nil, "sizes: group sizes (default 11,100,1000,4096)")
	f.IntVar(&opts.GroupCount, "group-count", 0, "state, small: number of groups (default 500, 30000)")
	f.IntVar(&opts.Size, "size", 0, "state, small: members per group (default 100, 11)")
	simParentCmd().AddCommand(cmd)
}

// runScribeReport runs the named report.
func runScribeReport(name string, o sim.Options) (sim.Report, error) {
	switch name {
	case "sizes":
		return sim.RunSizes(o)
	case "state":
		return sim.RunState(o)
	case "paper":
		return sim.RunPaper(o)
	case "small":
		return sim.RunSmall(o)
	case "failure":
		return sim.RunFailure(o)
	}
	return nil, fmt.Errorf("sim scribe: unknown report %q: want sizes, state, paper, small or failure", name)
}
