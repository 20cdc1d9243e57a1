package netbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync/atomic"
	"time"
)

// A run's watchdog. Every step of a run that waits (starting the cluster,
// subscribing, connecting a publisher, publishing, flushing, waiting for
// deliveries, closing) gives up once the run has made no progress (no
// delivery, no step finished) for a little longer than the stall limit:
// the watchdog writes the process's goroutines to goroutines.txt in the
// run's folder (when Config.Dir keeps it; else to a file of its own in
// the system's temporary folder) and cancels the run with an error naming the step, so an
// invocation that would hang fails with what it was waiting for instead.

// watchdog watches one run; steps are named as they start.
type watchdog struct {
	step     atomic.Pointer[string]
	steps    atomic.Int64
	progress func() int64 // deliveries so far
	limit    time.Duration
	dir      string
	cancel   context.CancelCauseFunc
	done     chan struct{}
}

// startWatchdog returns ctx under the watchdog and the watchdog (which
// writes its dump into dir, or into a temporary file when dir is empty);
// stop it when the run ends. It fires after stall and a quarter more, so that a
// wait that checks stall itself (the recorder's) says why first.
func startWatchdog(ctx context.Context, stall time.Duration, dir string, progress func() int64) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{progress: progress, limit: stall + stall/4, dir: dir, cancel: cancel, done: make(chan struct{})}
	w.begin("starting")
	go w.watch()
	return ctx, w
}

// begin names the step the run is in; starting a step is progress.
func (w *watchdog) begin(step string) {
	w.step.Store(&step)
	w.steps.Add(1)
}

// stop ends the watch (the run's context is cancelled with it).
func (w *watchdog) stop() {
	close(w.done)
	w.cancel(nil)
}

func (w *watchdog) watch() {
	tick := time.NewTicker(max(w.limit/16, time.Millisecond))
	defer tick.Stop()
	lastSteps, lastGot, since := w.steps.Load(), w.progress(), time.Now()
	for {
		select {
		case <-w.done:
			return
		case <-tick.C:
		}
		if s, g := w.steps.Load(), w.progress(); s != lastSteps || g != lastGot {
			lastSteps, lastGot, since = s, g, time.Now()
			continue
		}
		if time.Since(since) >= w.limit {
			w.cancel(w.stalled(lastGot))
			return
		}
	}
}

// stalled writes the goroutines and returns the error the run ends with.
func (w *watchdog) stalled(got int64) error {
	where := "not written"
	var f *os.File
	var err error
	if w.dir != "" {
		f, err = os.Create(filepath.Join(w.dir, "goroutines.txt"))
	} else {
		f, err = os.CreateTemp("", "sift-bench-net-goroutines-*.txt")
	}
	if err == nil {
		if pprof.Lookup("goroutine").WriteTo(f, 2) == nil && f.Close() == nil {
			where = f.Name()
		}
	}
	return fmt.Errorf("no progress for %v while %s (%d deliveries so far; goroutines: %s)", w.limit, *w.step.Load(), got, where)
}

// err returns the watchdog's error when it cancelled the run, else err.
func (w *watchdog) err(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled && cause != err {
		return fmt.Errorf("%w: %v", cause, err)
	}
	return err
}

// closeWithin closes cl, giving up when ctx ends (the watchdog fired):
// the close goes on in the background, and the run reports the stall.
func closeWithin(ctx context.Context, cl Cluster) error {
	done := make(chan error, 1)
	go func() { done <- cl.Close() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("close: %w", context.Cause(ctx))
	}
}
