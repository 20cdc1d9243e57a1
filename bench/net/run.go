package netbench

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
	"github.com/sift-pubsub/sift/bench/workload"
)

// Run generates the workload and runs every system cfg.Runs times,
// alternating, each run on a fresh cluster. A run that loses, repeats or
// misdelivers an event fails the benchmark: its figures would not be
// comparable.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w, err := workload.Net(cfg.Workload, cfg.Seed)
	if err != nil {
		return nil, err
	}
	dir, cleanup, err := bench.WorkDir(cfg.Dir, "sift-bench-net-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep := newReport(cfg, w)
	rep.Results, err = bench.Alternate(cfg.Systems, cfg.Runs, cfg.Progress, func(sys System, run int) (Result, error) {
		return runOnce(ctx, sys, run, w, cfg, bench.RunDir(dir, run, sys.Name()))
	})
	if err != nil {
		return nil, err
	}
	rep.finish()
	return rep, nil
}

// runOnce starts a cluster of sys, connects the subscribers to the last
// router and the publishers to the first, and runs the throughput phase
// then the latency phase.
func runOnce(ctx context.Context, sys System, run int, w workload.NetWorkload, cfg Config, dir string) (res Result, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	cl, err := sys.Start(ctx, cfg.Routers, dir)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, cl.Close()) }()
	rec := newRecorder(w, cfg.Events, cfg.Events+cfg.LatencyEvents)
	for i, s := range w.Subs {
		if err := cl.Subscribe(ctx, cfg.Routers-1, s, rec.subs[i].deliver); err != nil {
			return res, fmt.Errorf("subscriber %d: %w", i, err)
		}
	}
	res = Result{RunID: bench.StartRun(sys.Name(), run)}
	if err := throughputPhase(ctx, cl, rec, cfg, &res); err != nil {
		return res, fmt.Errorf("throughput phase: %w", err)
	}
	if err := latencyPhase(ctx, cl, rec, cfg); err != nil {
		return res, fmt.Errorf("latency phase: %w", err)
	}
	if n := rec.wrong(); n > 0 {
		return res, fmt.Errorf("%d deliveries unexpected or repeated", n)
	}
	loaded, paced := rec.histograms()
	res.Loaded, res.Paced = LatencyOf(loaded), LatencyOf(paced)
	return res, nil
}

// throughputPhase publishes cfg.Events events from cfg.Publishers
// connections as fast as the window allows, and measures until the last
// expected delivery.
func throughputPhase(ctx context.Context, cl Cluster, rec *recorder, cfg Config, res *Result) error {
	pubs := make([]Publisher, cfg.Publishers)
	for i := range pubs {
		p, err := cl.Publisher(ctx, 0, false)
		if err != nil {
			return err
		}
		pubs[i] = p
	}
	runtime.GC()
	stopProfile, err := bench.StartCPUProfile(cfg.ProfileDir, fmt.Sprintf("%s-run%d.pprof", res.System, res.Run))
	if err != nil {
		return err
	}
	defer stopProfile()
	bytes0, layer, bytesOK := cl.WireBytes()
	cpu0, cpuOK := bench.ProcessCPU()
	start := time.Now()
	var next atomic.Int64
	errs := make([]error, len(pubs))
	var wg sync.WaitGroup
	for i, p := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = publishAll(ctx, p, rec, &next, cfg)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := rec.waitFor(ctx, rec.cum[cfg.Events], cfg.Stall); err != nil {
		return err
	}
	elapsed := time.Since(start)
	cpu1, _ := bench.ProcessCPU()
	bytes1, _, _ := cl.WireBytes()
	res.Events = cfg.Events
	res.Deliveries = rec.cum[cfg.Events]
	res.Seconds = elapsed.Seconds()
	res.EventsPerSec = float64(cfg.Events) / elapsed.Seconds()
	res.DeliveriesPerSec = float64(res.Deliveries) / elapsed.Seconds()
	if cpuOK {
		res.CPUSeconds = (cpu1 - cpu0).Seconds()
	}
	if bytesOK && res.Deliveries > 0 {
		res.WireBytes, res.WireLayer = bytes1-bytes0, layer
	}
	return nil
}

// publishAll publishes sequences taken from next until cfg.Events, each
// within the window, then flushes.
func publishAll(ctx context.Context, p Publisher, rec *recorder, next *atomic.Int64, cfg Config) error {
	for {
		s := int(next.Add(1) - 1)
		if s >= cfg.Events {
			return p.Flush(ctx)
		}
		if !rec.windowOpen(s, cfg.Window) {
			// Send what the client library holds back in a batch: the
			// deliveries waited for may be in it.
			if err := p.Flush(ctx); err != nil {
				return err
			}
			if err := rec.waitWindow(ctx, s, cfg.Window, cfg.Stall); err != nil {
				return err
			}
		}
		if err := p.Publish(ctx, rec.event(s)); err != nil {
			return err
		}
	}
}

// latencyPhase publishes cfg.LatencyEvents events one at a time at
// cfg.Rate from one connection, and waits for every delivery.
func latencyPhase(ctx context.Context, cl Cluster, rec *recorder, cfg Config) error {
	p, err := cl.Publisher(ctx, 0, true)
	if err != nil {
		return err
	}
	interval := time.Duration(float64(time.Second) / cfg.Rate)
	start := time.Now()
	for i := range cfg.LatencyEvents {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		if err := p.Publish(ctx, rec.event(cfg.Events+i)); err != nil {
			return err
		}
	}
	if err := p.Flush(ctx); err != nil {
		return err
	}
	return rec.waitFor(ctx, rec.cum[rec.total], cfg.Stall)
}
