package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/spf13/cobra"
)

func init() {
	var conn routerFlags
	var opts subOptions
	var dur durableSubFlags
	cmd := &cobra.Command{
		Use:   "sub --router HOST:PORT --certs DIR [--count N] [--timeout DUR] ('FILTER' | --filters FILE)",
		Short: "Subscribe to a router and print matching events",
		Long: `Sub installs FILTER at the router, writes "ready" to standard error once
the router has acknowledged it, and prints each delivered event as one JSON
line {"event":{...}}, flushed per line. It exits after --count events, or
when --timeout has passed (an error if --count was given and not reached),
or on Ctrl-C. A filter the router refuses is an error naming the column.

With --durable ID --out FILE the subscription is durable: FILE is its
transaction log ({"pubend":P,"tick":T,"event":{...}}, {"pubend":P,"gap":[A,B]},
{"ct":{...}} lines), synced before each acknowledgement; a restart resumes
exactly where FILE ends. FILE.mark vouches for FILE's synced prefix so that
a restart reads only what follows it; deleting it costs one full read of
FILE. --router may list several routers, comma-separated.

With --filters FILE, sub subscribes every filter of FILE (the
subscriptions-file format of sift match: one filter per line, blank lines
and # comments skipped; ids count the other lines from 0), writes "ready N"
to standard error once all N are installed on every router they must
reach, and prints one line per delivered event: {"subs":[ID,...],
"event":{...}}, the matching ids ascending. Files larger than the router's
per-connection limit (siftd --max-subscriptions-per-conn) are spread over
several connections; each event is still printed once, but events whose
lowest matching ids are on different connections may print out of publish
order. A connection lost after "ready N" is made again: sub says so on
standard error, subscribes that connection's filters again and writes
"ready N" again once every connection is back (events published meanwhile
are missed).

With --assist the client offers its CPU to the router for placing
subscriptions in its routing table (siftd --rto, --ff): it answers the
router's covering queries while it runs.

With --filters FILE --claim the client claims, for each filter, a parent
among the filters it subscribed before on the same connection that covers
it; a router with the default (shallow) routing table checks each claim
with one covering test and places the filter below that parent instead of
searching its table (a false claim costs it its own placement, never an
event). Routers that do not take claims ignore them.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.filters != "" || opts.filterFile != "" { // sub_filters.go, sub_filterfile.go
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if opts.filterFile != "" {
				f, err := readFilterFile(opts) // sub_filterfile.go
				if err != nil {
					return fmt.Errorf("sub: %w", err)
				}
				args = []string{f}
			}
			if opts.claim && opts.filters == "" {
				return errors.New("sub: --claim needs --filters (a single filter has no earlier one to claim)")
			}
			if opts.filters != "" {
				if dur.enabled() {
					return errors.New("sub: --filters takes no --durable")
				}
				if err := subscribeFile(ctx, conn, opts, opts.filters, cmd.OutOrStdout(), cmd.ErrOrStderr()); err != nil {
					return fmt.Errorf("sub: %w", err)
				}
				return nil
			}
			if dur.enabled() {
				if err := subscribeDurable(ctx, conn, opts, dur, args[0], cmd.ErrOrStderr()); err != nil {
					return fmt.Errorf("sub: %w", err)
				}
				return nil
			}
			if err := subscribe(ctx, conn, opts, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr()); err != nil {
				return fmt.Errorf("sub: %w", err)
			}
			return nil
		},
	}
	conn.register(cmd)
	cmd.Flags().IntVar(&opts.count, "count", 0, "exit after this many events (0: no limit)")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 0, "exit after this long (0: no limit)")
	cmd.Flags().StringVar(&dur.id, "durable", "", "durable subscription ID: exactly-once delivery logged to --out (sub_durable.go)")
	cmd.Flags().StringVar(&dur.out, "out", "", "with --durable: the subscriber's log, one JSON line per event, gap or checkpoint")
	cmd.Flags().StringVar(&opts.filters, "filters", "", "subscribe every filter of this subscriptions file (format of sift match) instead of FILTER; prints ready N, then {\"subs\":[ID,...],\"event\":{...}} lines")
	cmd.Flags().StringVar(&opts.filterFile, "filter-file", "", "read FILTER from this file (one filter; surrounding white space ignored) instead of the command line")
	cmd.Flags().BoolVar(&opts.assist, "assist", false, "help the router place subscriptions in its routing table (RTO and FF, siftd --rto/--ff)")
	cmd.Flags().BoolVar(&opts.assistLie, "assist-lie", false, "with --assist: answer with random bits (tests of the router's --rto policies only)")
	cmd.Flags().MarkHidden("assist-lie")
	cmd.Flags().BoolVar(&opts.claim, "claim", false, "with --filters: claim each filter's place in the router's routing table (a covering parent among the connection's earlier filters; the router checks it)")
	rootCmd.AddCommand(cmd)
}

type subOptions struct {
	count     int
	timeout   time.Duration
	assist    bool   // offer RTO and FF assistance
	assistLie bool   // hidden: lie when assisting (tests)
	claim     bool   // --claim: claimed placements for --filters (sub_filters.go)
	filters   string // --filters FILE (sub_filters.go)
	// filterFile is --filter-file FILE (sub_filterfile.go).
	filterFile string
}

// dialSub connects like routerFlags.dial, offering assistance when asked.
func dialSub(ctx context.Context, conn routerFlags, opts subOptions) (*client.Client, error) {
	if !opts.assist {
		if opts.assistLie {
			return nil, errors.New("--assist-lie needs --assist")
		}
		return conn.dial(ctx, "sift-sub")
	}
	if conn.addr == "" || conn.certs == "" {
		return nil, errors.New("--router and --certs are required")
	}
	os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	cl, err := certs.Load(conn.certs, certs.Client)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, conn.dialTimeout)
	defer cancel()
	return client.Dial(dctx, conn.addr, client.Options{TLS: cl.ClientConfig(), Name: "sift-sub",
		Assist: &client.Assist{RTO: true, FF: true, Lie: opts.assistLie, LieSeed: 1}})
}

func subscribe(ctx context.Context, conn routerFlags, opts subOptions, filter string, stdout, stderr io.Writer) error {
	if opts.count < 0 || opts.timeout < 0 {
		return errors.New("--count and --timeout must not be negative")
	}
	var s interface {
		Next(context.Context) (match.Event, error)
	}
	if opts.assist {
		c, err := dialSub(ctx, conn, opts)
		if err != nil {
			return err
		}
		defer c.Close()
		if s, err = c.Subscribe(ctx, filter); err != nil {
			return err
		}
	} else {
		sess, ss, err := subscribeSession(ctx, conn, filter, stderr) // sub_session.go: reconnects
		if err != nil {
			return err
		}
		defer sess.Close()
		s = ss
	}
	fmt.Fprintln(stderr, "ready")
	if opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.timeout)
		defer cancel()
	}
	w := bufio.NewWriter(stdout)
	var line []byte
	for n := 0; opts.count == 0 || n < opts.count; n++ {
		e, err := s.Next(ctx)
		switch {
		case errors.Is(err, context.DeadlineExceeded) && opts.count == 0:
			return nil
		case errors.Is(err, context.Canceled) && opts.count == 0:
			return nil // Ctrl-C or SIGTERM: the normal end of an open-ended sub
		case errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("timed out after %d of %d events", n, opts.count)
		case err != nil:
			return err
		}
		line = append(e.AppendJSON(append(line[:0], `{"event":`...)), "}\n"...)
		w.Write(line)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}
