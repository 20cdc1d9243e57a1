// Command sift is Sift's command line for users and researchers: it parses
// and compares filters, matches events against subscriptions through any
// registered index, runs benchmarks and simulators, and talks to routers.
//
// Each subcommand lives in its own file and registers itself with rootCmd in
// an init function, so subcommands can be added without touching this file.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// rootCmd is the top of the command tree; subcommands add themselves to it.
var rootCmd = &cobra.Command{
	Use:           "sift",
	Short:         "Sift: content-based publish/subscribe routing",
	SilenceUsage:  true,
	SilenceErrors: true,
}

// exitError carries an exit status with an already-printed or printable
// message; commands return it to exit with a status other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitInterrupted is the status after Ctrl-C or SIGTERM (128 + SIGINT).
const exitInterrupted = 130

// signalGrace is how long a command may take to stop after the first
// SIGINT or SIGTERM. Commands that watch their context close their
// connections and return at once; one still running after it (a
// simulator or benchmark busy computing, which does not look at the
// context) is stopped by main with status 130, so every command stops on
// the first signal.
const signalGrace = 5 * time.Second

// main runs the command with a context that Ctrl-C and SIGTERM cancel, so
// commands close their connections cleanly (a subscriber's filter leaves
// the routers at once instead of at the idle timeout); a command that has
// not returned signalGrace later is stopped, and a second signal kills the
// process as usual. A command for which a signal is the normal end (sub)
// returns nil and exits 0; one cut short exits 130.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
		time.Sleep(signalGrace)
		fmt.Fprintf(os.Stderr, "sift: interrupted (the command had not stopped %v after the signal)\n", signalGrace)
		os.Exit(exitInterrupted)
	}()
	err := rootCmd.ExecuteContext(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		os.Exit(exitInterrupted) // a command cut short; one that stops cleanly on a signal returns nil
	}
	if err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
		}
		os.Exit(code)
	}
}
