package durablebench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sift-pubsub/sift/bench"
	netbench "github.com/sift-pubsub/sift/bench/net"
)

// Run runs every system cfg.Runs times, alternating, each run on a fresh
// cluster. A run that loses an event, or (Sift) repeats one, fails the
// benchmark.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	dir, cleanup, err := bench.WorkDir(cfg.Dir, "sift-bench-durable-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep := newReport(cfg)
	rep.Results, err = bench.Alternate(cfg.Systems, cfg.Runs, cfg.Progress, func(sys System, run int) (Result, error) {
		runDir := bench.RunDir(dir, run, sys.Name())
		defer os.RemoveAll(runDir)
		return runOnce(ctx, sys, run, cfg, runDir)
	})
	if err != nil {
		return nil, err
	}
	rep.finish()
	return rep, nil
}

// bench is one run's cluster, clients and recorder.
type benchRun struct {
	cfg  Config
	cl   Cluster
	rec  *recorder
	pubs []Publisher
	subs []Subscriber
	shb  []int // SHB of each subscriber
}

// runOnce starts a cluster of sys, connects the subscribers and
// publishers, and runs the phases.
func runOnce(ctx context.Context, sys System, run int, cfg Config, dir string) (res Result, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	cl, err := sys.Start(ctx, cfg.Topology, dir)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, cl.Close()) }()
	ev := NewEvents(cfg.Groups, cfg.Payload, cfg.Seed)
	b := &benchRun{cfg: cfg, cl: cl, rec: newRecorder(ev, cfg.Subscribers, cfg.Events, cfg.LatencyEvents, cfg.CatchupEvents)}
	if err := b.connect(ctx); err != nil {
		return res, err
	}
	res = Result{RunID: bench.StartRun(sys.Name(), run)}
	defer func() {
		if d, ok := cl.(Diagnoser); ok && err != nil && os.Getenv("SIFT_BENCH_DIAGNOSE") != "" {
			err = fmt.Errorf("%w\n%s", err, d.Diagnose(context.Background()))
		}
	}()
	if err := b.throughput(ctx, &res); err != nil {
		return res, fmt.Errorf("throughput phase: %w", err)
	}
	if err := b.latency(ctx, &res); err != nil {
		return res, fmt.Errorf("latency phase: %w", err)
	}
	if cfg.CatchupEvents > 0 {
		if err := b.catchup(ctx, &res); err != nil {
			return res, fmt.Errorf("catch-up phase: %w", err)
		}
	}
	dups, wrong := b.rec.counts()
	if wrong > 0 {
		return res, fmt.Errorf("%d deliveries of events outside the subscriber's group", wrong)
	}
	if _, sift := sys.(Sift); dups > 0 && sift {
		return res, fmt.Errorf("%d events delivered twice (exactly-once broken)", dups)
	}
	res.Redelivered = dups
	res.Loaded, res.Paced = netbench.LatencyOf(b.rec.histogram(phaseThroughput)), netbench.LatencyOf(b.rec.histogram(phaseLatency))
	return res, nil
}

// connect subscribes every subscriber (round robin over the SHBs, in
// parallel) and connects the publishers.
func (b *benchRun) connect(ctx context.Context) error {
	n := b.cfg.Subscribers
	b.subs, b.shb = make([]Subscriber, n), make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		b.shb[i] = i % b.cfg.Topology.SHBs
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sub := b.rec.ev.Sub(i)
			b.subs[i], errs[i] = b.cl.Subscribe(ctx, b.shb[i], sub, AckPolicy{Every: b.cfg.AckEvery, Idle: b.cfg.AckIdle}, b.rec.deliverTo(i))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("subscribers: %w", err)
	}
	for range b.cfg.Publishers {
		p, err := b.cl.Publisher(ctx, b.cfg.InFlight)
		if err != nil {
			return fmt.Errorf("publishers: %w", err)
		}
		b.pubs = append(b.pubs, p)
	}
	return nil
}

// publishRange publishes seqs [from, to) from every publisher in
// parallel, each taking the next seq, and waits until all are
// acknowledged.
func (b *benchRun) publishRange(ctx context.Context, from, to int) error {
	var next atomic.Int64
	next.Store(int64(from))
	errs := make([]error, len(b.pubs))
	var wg sync.WaitGroup
	for i, p := range b.pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				s := int(next.Add(1) - 1)
				if s >= to {
					errs[i] = p.Flush(ctx)
					return
				}
				if err := p.Publish(ctx, b.rec.event(s)); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// throughput publishes the throughput phase's events under the churn and
// waits for every delivery.
func (b *benchRun) throughput(ctx context.Context, res *Result) error {
	runtime.GC()
	stopProfile, err := bench.StartCPUProfile(b.cfg.ProfileDir, fmt.Sprintf("%s-run%d.pprof", res.System, res.Run))
	if err != nil {
		return err
	}
	defer stopProfile()
	ch := startChurn(ctx, b.cfg.Churn, b.subs)
	cpu0, _ := bench.ProcessCPU()
	start := time.Now()
	err = b.publishRange(ctx, 0, b.cfg.Events)
	acked := time.Since(start)
	if err == nil {
		err = b.rec.waitFor(ctx, b.rec.expected(b.cfg.Events), b.cfg.Stall)
	}
	end := time.Unix(0, b.rec.last.Load())
	cpu1, cpuOK := bench.ProcessCPU()
	n, cerr := ch.end()
	if err = errors.Join(err, cerr); err != nil {
		return err
	}
	res.Events, res.Deliveries, res.Disconnections = b.cfg.Events, b.rec.delivered.Load(), n
	res.AckSeconds, res.Seconds = acked.Seconds(), end.Sub(start).Seconds()
	res.AckedPerSec = float64(res.Events) / res.AckSeconds
	res.DeliveredPerS = float64(res.Deliveries) / res.Seconds
	if cpuOK {
		res.CPUSeconds = (cpu1 - cpu0).Seconds()
	}
	return nil
}

// latency publishes the latency phase's events one at a time at
// cfg.Rate from the first publisher and waits for every delivery.
func (b *benchRun) latency(ctx context.Context, res *Result) error {
	from, to := b.rec.bounds[phaseLatency], b.rec.bounds[phaseLatency+1]
	stopProfile, err := bench.StartCPUProfile(b.cfg.ProfileDir, fmt.Sprintf("%s-run%d-latency.pprof", res.System, res.Run))
	if err != nil {
		return err
	}
	defer stopProfile()
	interval := time.Duration(float64(time.Second) / b.cfg.Rate)
	start := time.Now()
	for s := from; s < to; s++ {
		if d := time.Until(start.Add(time.Duration(s-from) * interval)); d > 0 {
			time.Sleep(d)
		}
		if err := b.pubs[0].Publish(ctx, b.rec.event(s)); err != nil {
			return err
		}
	}
	if err := b.pubs[0].Flush(ctx); err != nil {
		return err
	}
	return b.rec.waitFor(ctx, b.rec.expected(to), b.cfg.Stall)
}

// catchup takes the subscribers away (or stops the first SHB's router),
// builds the backlog, brings them all back at once and times the
// catch-up.
func (b *benchRun) catchup(ctx context.Context, res *Result) error {
	from, to := b.rec.bounds[phaseCatchup], b.rec.bounds[phaseCatchup+1]
	restarter, ok := b.cl.(SHBRestarter)
	if b.cfg.RestartSHB && !ok {
		return ErrNoRestart
	}
	if b.cfg.RestartSHB {
		if err := restarter.StopSHB(0); err != nil {
			return err
		}
	} else if err := b.each(func(s Subscriber) error { return s.Pause() }); err != nil {
		return err
	}
	if err := b.publishRange(ctx, from, to); err != nil {
		return err
	}
	// The backlog is the affected subscribers': with an SHB restart, those
	// of the first SHB (the others got their events live).
	affected := func(i int) bool { return !b.cfg.RestartSHB || b.shb[i] == 0 }
	before := b.rec.deliveredTo(affected)
	stopProfile, err := bench.StartCPUProfile(b.cfg.ProfileDir, fmt.Sprintf("%s-run%d-catchup.pprof", res.System, res.Run))
	if err != nil {
		return err
	}
	defer stopProfile()
	cpu0, _ := bench.ProcessCPU()
	start := time.Now()
	b.rec.catchupFrom.Store(start.UnixNano())
	defer b.trace(start)()
	if b.cfg.RestartSHB {
		err = restarter.StartSHB(ctx, 0)
	} else {
		err = b.each(func(s Subscriber) error { return s.Resume(ctx) })
	}
	if err == nil {
		err = b.rec.waitFor(ctx, b.rec.expected(to), b.cfg.Stall)
	}
	if err != nil {
		return err
	}
	cpu1, _ := bench.ProcessCPU()
	end := time.Unix(0, b.rec.last.Load())
	res.Backlog = b.rec.deliveredTo(affected) - before
	res.CatchupSeconds = end.Sub(start).Seconds()
	if first := b.rec.catchupFirst.Load(); first != 0 {
		res.CatchupFirstSeconds = time.Unix(0, first).Sub(start).Seconds()
	}
	res.CatchupPerSec = float64(res.Backlog) / res.CatchupSeconds
	res.CatchupCPU = (cpu1 - cpu0).Seconds()
	return nil
}

// each runs f on every subscriber at once.
func (b *benchRun) each(f func(Subscriber) error) error {
	errs := make([]error, len(b.subs))
	var wg sync.WaitGroup
	for i, s := range b.subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// trace prints the cluster's counters and the deliveries every
// SIFT_BENCH_TRACE to stderr until the returned func is called (nothing
// without the variable or a Tracer cluster).
func (b *benchRun) trace(start time.Time) (stop func()) {
	every, err := time.ParseDuration(os.Getenv("SIFT_BENCH_TRACE"))
	t, ok := b.cl.(Tracer)
	if err != nil || every <= 0 || !ok {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				fmt.Fprintf(os.Stderr, "trace %6.2fs delivered=%d%s\n", time.Since(start).Seconds(), b.rec.delivered.Load(), t.Trace(context.Background()))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
