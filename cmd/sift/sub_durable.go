package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sift-pubsub/sift/internal/sublog"
	"github.com/sift-pubsub/sift/router/client"
)

// durableSubFlags are sub's --durable mode settings.
type durableSubFlags struct {
	id  string // subscription id at the SHB
	out string // the transaction log (package sublog)
}

func (d durableSubFlags) enabled() bool { return d.id != "" || d.out != "" }

// subscribeDurable resumes (or registers) durable subscription d.id and
// appends its messages to the log d.out, syncing the log before each
// acknowledgement. The log's checkpoint is the CT presented on start; an
// empty log presents none (a known id resumes from its last
// acknowledgement at the SHB, a new one starts now). It runs until
// --count events were logged, --timeout passed, or SIGINT/SIGTERM; the log
// is synced on the way out.
func subscribeDurable(ctx context.Context, conn routerFlags, opts subOptions, d durableSubFlags, filter string, stderr io.Writer) (err error) {
	if d.id == "" || d.out == "" {
		return errors.New("--durable ID and --out FILE go together")
	}
	if opts.count < 0 || opts.timeout < 0 {
		return errors.New("--count and --timeout must not be negative")
	}
	dopts, err := conn.durableOptions("sift-sub", conn.dialTimeout)
	if err != nil {
		return err
	}
	log, rec, err := sublog.Open(d.out)
	if err != nil {
		return err
	}
	defer func() { err = closeDurableLog(log, err, stderr) }()
	if rec.MarkErr != nil {
		warnMark(stderr, rec.MarkErr)
	}
	if rec.Torn > 0 {
		fmt.Fprintf(stderr, "truncated a torn last line (%d bytes) of %s\n", rec.Torn, d.out)
	}
	var ct client.CT
	if len(log.CT()) > 0 {
		ct = log.CT().Clone()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: dopts, ID: d.id, Filter: filter, CT: ct})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintln(stderr, "ready")
	if opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.timeout)
		defer cancel()
	}
	return consumeDurable(ctx, s, log, opts.count)
}

// silenceEvery is how often a subscriber that only hears silences
// writes a ct line, syncs and acknowledges (the SHB sends silences every
// few tens of milliseconds; a line and an fsync for each would be waste).
const silenceEvery = time.Second

// consumeDurable logs the subscription's messages: it takes every message
// waiting (one group), syncs the log, then acknowledges the synced CT. A
// group with an event or gap is always synced and acknowledged at once,
// even when every message in it was a repeat (the SHB bounds what it
// sends unacknowledged); silences alone wait up to silenceEvery.
func consumeDurable(ctx context.Context, s *client.DurableSubscription, log *sublog.Log, count int) error {
	msgs := s.Messages()
	logged := 0
	lastSync := time.Now()
	for count == 0 || logged < count {
		var g group
		select {
		case m, ok := <-msgs:
			if !ok {
				return ended(s)
			}
			var err error
			if g, err = recordGroup(log, m, msgs); err != nil {
				return err
			}
			logged += g.logged
		case <-ctx.Done():
			return ctxEnd(ctx, logged, count)
		}
		if g.open && g.received == 0 && log.Buffered() == 0 && time.Since(lastSync) < silenceEvery {
			continue
		}
		synced, err := log.Sync()
		if err != nil {
			return err
		}
		lastSync = time.Now()
		if !g.open {
			return ended(s)
		}
		if err := s.Ack(synced); err != nil {
			return err
		}
	}
	return nil
}

// group counts what one group of messages brought.
type group struct {
	logged   int  // events appended to the log
	received int  // events and gaps received, repeats included
	open     bool // the channel is still open
}

// recordGroup records m and every message already waiting.
func recordGroup(log *sublog.Log, m client.DurableMessage, msgs <-chan client.DurableMessage) (group, error) {
	g := group{open: true}
	for {
		n, err := record(log, m)
		if err != nil {
			return g, err
		}
		g.logged += n
		if m.Kind == client.DurableEvent || m.Kind == client.DurableGap {
			g.received++
		}
		var ok bool
		select {
		case m, ok = <-msgs:
			if !ok {
				g.open = false
				return g, nil
			}
		default:
			return g, nil
		}
	}
}

// ended is the error of a subscription whose channel closed.
func ended(s *client.DurableSubscription) error {
	if err := s.Err(); err != nil && !errors.Is(err, client.ErrClosed) {
		return fmt.Errorf("subscription ended: %w", err)
	}
	return errors.New("subscription ended")
}

// record appends one message to the log and returns 1 for a logged event.
func record(log *sublog.Log, m client.DurableMessage) (int, error) {
	var ok bool
	var err error
	switch m.Kind {
	case client.DurableStart:
		for _, p := range m.CT.Pubends() {
			if _, known := log.CT()[p]; !known {
				_, err = log.Silence(p, m.CT[p])
			}
		}
	case client.DurableEvent:
		ok, err = log.Event(m.Pubend, m.Tick, m.Event)
	case client.DurableSilence:
		_, err = log.Silence(m.Pubend, m.Tick)
	case client.DurableGap:
		_, err = log.Gap(m.Pubend, m.From, m.To)
	}
	if ok {
		return 1, err
	}
	return 0, err
}

// ctxEnd says how the wait for messages ended: a signal or --timeout
// without --count is a normal end.
func ctxEnd(ctx context.Context, events, count int) error {
	if count > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %d of %d events", events, count)
	}
	return nil
}

// closeDurableLog closes the subscriber's log on the way out: a failure to
// sync or close it is the command's error (unless it already has one); a
// mark that could not be written is only a warning.
func closeDurableLog(log *sublog.Log, err error, stderr io.Writer) error {
	cerr := log.Close()
	switch {
	case errors.Is(cerr, sublog.ErrMark):
		warnMark(stderr, cerr)
	case cerr != nil && err == nil:
		return cerr
	}
	return err
}

// warnMark tells the user the log's mark (a cache) could not be written.
func warnMark(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "warning: %v (the next start reads the log past the older mark)\n", err)
}
