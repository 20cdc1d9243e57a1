package main

import (
	"fmt"
	"io"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/spf13/cobra"
)

func init() {
	var opts demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Match a built-in stock-trading sample, then route it through a live router",
		Long: `Demo generates a seeded sample of stock-trading subscriptions and trade
events (strings and numbers mixed: symbols, prices, volumes, venues, prefixes,
!=), matches every event through the fast index, checks a sample against the
brute-force scan, and prints a few deliveries and the match rate. Then it
starts a router on loopback (QUIC, mutual TLS with fresh certificates),
connects publishing and subscribing clients, and checks every delivery
against the scan. Last, it links four routers into a small tree, publishes
at two of them and subscribes at the others, checks every subscriber got
exactly its matching events once in publisher order, and prints how many
events crossed each link. Finally a durable subscriber, three routers from
the publisher, disconnects, misses a batch, reconnects with its checkpoint
token and catches up: it must hold every matching event exactly once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := runDemo(cmd.OutOrStdout(), opts); err != nil {
				return err
			}
			if opts.noRouter {
				return nil
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "\n== the same workload through a router on loopback")
			if err := Demo(out, DemoOptions{Seed: opts.seed}); err != nil {
				return err
			}
			fmt.Fprintln(out, "\n== a live mesh of four routers: events are filtered at every hop")
			if err := MeshDemo(out, MeshDemoOptions{Seed: opts.seed}); err != nil {
				return err
			}
			fmt.Fprintln(out, "\n== the same mesh forwarding on Bloom summaries (inner routers never decode an event they only forward)")
			bloom := func(c *router.Config) { c.Forward = router.ForwardBloom }
			if err := MeshDemo(out, MeshDemoOptions{Seed: opts.seed, Mode: "bloom", Configure: bloom}); err != nil {
				return err
			}
			fmt.Fprintln(out, "\n== a durable subscriber disconnects, misses events, reconnects and catches up")
			return DurableDemo(out, DurableDemoOptions{Seed: opts.seed})
		},
	}
	cmd.Flags().IntVar(&opts.subs, "subs", 10_000, "number of subscriptions")
	cmd.Flags().IntVar(&opts.events, "events", 1_000, "number of events")
	cmd.Flags().Uint64Var(&opts.seed, "seed", 1, "workload seed")
	cmd.Flags().IntVar(&opts.show, "show", 5, "deliveries to print")
	cmd.Flags().BoolVar(&opts.noRouter, "no-router", false, "skip the router, mesh and durable parts")
	rootCmd.AddCommand(cmd)
}

type demoOptions struct {
	subs, events, show int
	seed               uint64
	noRouter           bool
}

func runDemo(out io.Writer, opts demoOptions) error {
	w, err := workload.Stock(workload.StockConfig{Subscriptions: opts.subs, Events: opts.events}, opts.seed)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	ids := make([]match.ID, len(w.Filters))
	for i := range ids {
		ids[i] = match.ID(i)
	}
	idx, ref := match.NewFast(match.FastConfig{}), match.NewScan()
	start := time.Now()
	if err := match.Load(idx, ids, w.Filters); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	built := time.Since(start)
	if err := match.Load(ref, ids, w.Filters); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(out, "Sift demo: %d stock-trading subscriptions, %d trade events (seed %d), fast index built in %v\n\n",
		len(w.Filters), len(w.Events), opts.seed, built.Round(time.Microsecond))

	var got []match.ID
	total, shown := 0, 0
	start = time.Now()
	for n, e := range w.Events {
		got = match.SortIDs(idx.Match(e, got[:0]))
		total += len(got)
		if len(got) > 0 && shown < opts.show {
			shown++
			fmt.Fprintf(out, "event %d %v\n  -> %d subscribers, e.g. #%d: %v\n", n, e, len(got), got[0], w.Filters[got[0]])
		}
	}
	elapsed := time.Since(start)
	if err := checkSample(idx, ref, w.Events); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	perEvent := elapsed / time.Duration(max(1, len(w.Events)))
	fmt.Fprintf(out, "\n%d deliveries for %d events: %.2f matches per event, %.3f%% of subscriptions per event\n",
		total, len(w.Events), float64(total)/float64(len(w.Events)),
		100*float64(total)/float64(len(w.Events))/float64(max(1, len(w.Filters))))
	fmt.Fprintf(out, "fast index: %v per event; results checked against the brute-force scan on every 10th event\n", perEvent)
	return nil
}

// checkSample compares the fast index with Scan on every tenth event.
func checkSample(idx, ref match.Index, events []match.Event) error {
	for n := 0; n < len(events); n += 10 {
		got := match.SortIDs(idx.Match(events[n], nil))
		want := match.SortIDs(ref.Match(events[n], nil))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("event %d: fast index found %v, scan %v", n, got, want)
		}
	}
	return nil
}
