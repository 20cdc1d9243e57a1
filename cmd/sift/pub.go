package main

import (
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
	var dur durablePubFlags
	var stream bool
	cmd := &cobra.Command{
		Use:   "pub --router HOST:PORT --certs DIR [--durable [--pubend NAME] [--id ID] [--timeout DUR] [--rate N]] [FILE|-]",
		Short: "Publish JSON Lines events to a router",
		Long: `Pub reads events (JSON Lines, one flat object per line) from FILE or
standard input, publishes them to the router in batches, and exits once the
router has accepted them all, printing "published N events". Every line is
checked before anything is sent: a malformed event publishes nothing. With
--stream each event is published as its line arrives instead, and a
malformed line stops pub once the events before it are published. When the
connection fails, pub says how many events the router accepted (those were
routed).

With --durable it waits until the pubend has logged every event, riding out
router restarts (it resends what was not acknowledged; nothing is logged
twice), and fails only when no router answered for --timeout, saying how
many events (the first N of the input) were acknowledged. Event N of the
input is sequence N of the publisher id (--id; by default derived from the
host and the file's path), so running the same file again resumes after
what the pubend logged instead of publishing it twice.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "-"
			if len(args) == 1 {
				path = args[0]
			}
			if err := dur.check(cmd.Flags().Changed); err != nil {
				return fmt.Errorf("pub: %w", err)
			}
			if err := checkAdvertFlags(dur.on); err != nil { // pub_advertise.go
				return fmt.Errorf("pub: %w", err)
			}
			if stream {
				if dur.on || len(pubAdverts.filters) > 0 {
					return errors.New("pub: --stream takes no --durable or --advertise")
				}
				n, err := publishStream(cmd.Context(), conn, cmd.InOrStdin(), path) // pub_stream.go
				if err != nil {
					return fmt.Errorf("pub: %w", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "published %d events\n", n)
				return nil
			}
			events, err := readEventsArg(cmd.Context(), cmd.InOrStdin(), path)
			if err != nil {
				return err
			}
			if dur.on {
				n, earlier, err := publishDurable(cmd.Context(), conn, dur, path, events)
				if err != nil {
					return fmt.Errorf("pub: %w", err)
				}
				if earlier > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "published %d events (%d of them logged by an earlier run)\n", n, earlier)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "published %d events\n", n)
				}
				return nil
			}
			n, err := publish(cmd.Context(), conn, events)
			if err != nil {
				return fmt.Errorf("pub: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "published %d events\n", n)
			return nil
		},
	}
	conn.register(cmd)
	cmd.Flags().BoolVar(&stream, "stream", false, "publish each event as its line arrives (a pipe's events go out at once) instead of checking the whole input first; a bad line stops pub after publishing the events before it")
	cmd.Flags().BoolVar(&dur.on, "durable", false, "publish durably: wait until the pubend logged every event (pub_durable.go)")
	cmd.Flags().StringVar(&dur.pubend, "pubend", "", "with --durable: the pubend (default: the router's own)")
	cmd.Flags().StringVar(&dur.id, "id", "", "with --durable: the publisher id; a run with the id of an earlier one resumes after what it logged (default: derived from the host and the file's path; random for standard input)")
	cmd.Flags().DurationVar(&dur.timeout, "timeout", 30*time.Second, "with --durable: give up after this long without a working router")
	cmd.Flags().Float64Var(&dur.rate, "rate", 0, "with --durable: publish at most this many events per second (0: no limit)")
	cmd.Flags().Var(&pubAdverts, "advertise", "advertise FILTER before publishing (repeatable; routers started with --advertise refuse events outside the advertisements)")
	cmd.Flags().DurationVar(&pubAdverts.hold, "hold", 0, "with --advertise: stay connected this long after publishing, keeping the advertisements in place (they are withdrawn when the publisher leaves)")
	rootCmd.AddCommand(cmd)
}

// readEventsArg reads a whole events file, or standard input for "-"; a
// signal (ctx) stops the reading of a file between lines, and of standard
// input at once, even while a pipe that stays open blocks the read (the
// reading goroutine is left behind: pub is exiting).
func readEventsArg(ctx context.Context, stdin io.Reader, path string) ([]match.Event, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if path != "-" {
		return readEventsCtx(ctx, path)
	}
	type result struct {
		events []match.Event
		err    error
	}
	done := make(chan result, 1)
	go func() {
		events, err := match.ReadEvents(stdin)
		done <- result{events, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fileError("stdin", r.err)
		}
		return r.events, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func publish(ctx context.Context, conn routerFlags, events []match.Event) (int, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := conn.dial(ctx, "sift-pub")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := advertiseAll(ctx, c, events); err != nil { // pub_advertise.go
		return 0, err
	}
	if err := c.Publish(ctx, events...); err != nil {
		return int(c.Accepted()), acceptedError(c.Accepted(), len(events), err)
	}
	if err := c.Flush(ctx); err != nil {
		return int(c.Accepted()), acceptedError(c.Accepted(), len(events), err)
	}
	holdAdverts(ctx) // pub_advertise.go
	return len(events), nil
}

// acceptedError says how many of the events the router accepted before
// err: those are routed; the rest may or may not have been.
func acceptedError(accepted uint64, total int, err error) error {
	return fmt.Errorf("%d of %d events accepted by the router: %w", accepted, total, err)
}

// routerFlags are the connection flags pub and sub share.
type routerFlags struct {
	addr, certs string
	dialTimeout time.Duration
}

func (f *routerFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.addr, "router", "", "router address HOST:PORT (required)")
	cmd.Flags().StringVar(&f.certs, "certs", "", "certificates folder with ca.pem, client.pem, client-key.pem (required)")
	cmd.Flags().DurationVar(&f.dialTimeout, "dial-timeout", 10*time.Second, "give up connecting after this long")
}

// dial connects to the router with the folder's client certificate.
func (f *routerFlags) dial(ctx context.Context, name string) (*client.Client, error) {
	return f.dialAssist(ctx, name, nil)
}

// dialAssist is dial with the client offering assist (nil: none).
func (f *routerFlags) dialAssist(ctx context.Context, name string, assist *client.Assist) (*client.Client, error) {
	return f.dialOptions(ctx, client.Options{Name: name, Assist: assist})
}

// dialOptions is dial with opts (its TLS set from the folder).
func (f *routerFlags) dialOptions(ctx context.Context, opts client.Options) (*client.Client, error) {
	if f.addr == "" || f.certs == "" {
		return nil, fmt.Errorf("--router and --certs are required")
	}
	// The CLI is no place for quic-go's UDP buffer advice; siftd logs it.
	os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	cl, err := certs.Load(f.certs, certs.Client)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, f.dialTimeout)
	defer cancel()
	opts.TLS = cl.ClientConfig()
	return client.Dial(dctx, f.addr, opts)
}
