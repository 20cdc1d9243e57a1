package netbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
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
	rec := newRecorder(w, cfg.Events, cfg.LatencyEvents)
	dumpDir := dir
	if cfg.Dir == "" {
		dumpDir = "" // dir goes when the benchmark ends
	}
	ctx, wd := startWatchdog(ctx, cfg.Stall, dumpDir, rec.got.Load)
	defer wd.stop()
	defer func() { err = wd.err(ctx, err) }()
	wd.begin("starting the cluster")
	cl, err := sys.Start(ctx, cfg.Routers, dir)
	if err != nil {
		return res, err
	}
	defer func() {
		wd.begin("closing the cluster")
		err = errors.Join(err, closeWithin(ctx, cl))
	}()
	for i, s := range w.Subs {
		wd.begin(fmt.Sprintf("subscribing subscriber %d", i))
		if err := cl.Subscribe(ctx, cfg.Routers-1, s, rec.subs[i].deliver); err != nil {
			return res, fmt.Errorf("subscriber %d: %w", i, err)
		}
	}
	res = Result{RunID: bench.StartRun(sys.Name(), run)}
	wd.begin("in the throughput phase")
	if err := throughputPhase(ctx, cl, rec, cfg, &res); err != nil {
		return res, fmt.Errorf("throughput phase: %w", err)
	}
	wd.begin("in the latency phase")
	if err := latencyPhase(ctx, cl, rec, cfg, &res); err != nil {
		return res, fmt.Errorf("latency phase: %w", err)
	}
	if n := rec.wrong(int64(res.Events)); n > 0 {
		return res, fmt.Errorf("%d deliveries unexpected or repeated", n)
	}
	loaded, paced := rec.histograms()
	res.Loaded, res.Paced = LatencyOf(loaded), LatencyOf(paced)
	return res, nil
}

// throughputPhase publishes events from cfg.Publishers connections as
// fast as the window allows, at least cfg.Events of them and for at least
// cfg.Duration, and measures until the last expected delivery.
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
	transport0 := transportStats(pubs)
	cpu0, cpuOK := bench.ProcessCPU()
	start := time.Now()
	// The sequences to publish are unbounded until the duration has
	// passed, then what was handed out by then (at least cfg.Events).
	// Every sequence below that limit is published by whoever took it.
	stop := time.AfterFunc(cfg.Duration, func() { rec.closeTakes(int64(cfg.Events)) })
	defer stop.Stop()
	errs := make([]error, len(pubs))
	var wg sync.WaitGroup
	for i, p := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = publishAll(ctx, p, rec, cfg)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	n := rec.takesLimit()
	if err := rec.waitFor(ctx, rec.expected(n), cfg.Stall); err != nil {
		return err
	}
	elapsed := time.Since(start)
	cpu1, _ := bench.ProcessCPU()
	bytes1, _, _ := cl.WireBytes()
	res.Events = int(n)
	res.Deliveries = rec.expected(n)
	res.Seconds = elapsed.Seconds()
	res.EventsPerSec = float64(n) / elapsed.Seconds()
	res.DeliveriesPerSec = float64(res.Deliveries) / elapsed.Seconds()
	if cpuOK {
		res.CPUSeconds = (cpu1 - cpu0).Seconds()
	}
	if bytesOK && res.Deliveries > 0 {
		res.WireBytes, res.WireLayer = bytes1-bytes0, layer
	}
	if transport0 != nil {
		res.Transport = transportStats(pubs).since(*transport0)
	}
	return nil
}

// transportStats sums the publishers' transport counters (the smallest
// congestion window, the largest smoothed RTT), or nil when a publisher
// does not report them.
func transportStats(pubs []Publisher) *TransportStats {
	var sum TransportStats
	for i, p := range pubs {
		tr, ok := p.(TransportReporter)
		if !ok {
			return nil
		}
		st := tr.TransportStats()
		sum.PacketsSent += st.PacketsSent
		sum.PacketsLost += st.PacketsLost
		sum.PacketsReceived += st.PacketsReceived
		if i == 0 || st.CongestionWindow < sum.CongestionWindow {
			sum.CongestionWindow = st.CongestionWindow
		}
		sum.SmoothedRTT = max(sum.SmoothedRTT, st.SmoothedRTT)
	}
	return &sum
}

// since is t's counters less those of before (a loss count may fall, as
// packets declared lost can arrive after all: then zero); the window and
// RTT are t's.
func (t *TransportStats) since(before TransportStats) *TransportStats {
	sub := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	d := *t
	d.PacketsSent = sub(t.PacketsSent, before.PacketsSent)
	d.PacketsLost = sub(t.PacketsLost, before.PacketsLost)
	d.PacketsReceived = sub(t.PacketsReceived, before.PacketsReceived)
	return &d
}

// publishAll publishes sequences taken from rec until its limit, each within
// the window, then flushes.
func publishAll(ctx context.Context, p Publisher, rec *recorder, cfg Config) error {
	for {
		s, ok := rec.take()
		if !ok {
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
// cfg.Rate from one connection, and waits for every delivery (of the
// res.Events published before too).
func latencyPhase(ctx context.Context, cl Cluster, rec *recorder, cfg Config, res *Result) error {
	p, err := cl.Publisher(ctx, 0, true)
	if err != nil {
		return err
	}
	pubs := []Publisher{p}
	if before := transportStats(pubs); before != nil {
		defer func() { res.PacedTransport = transportStats(pubs).since(*before) }()
	}
	interval := time.Duration(float64(time.Second) / cfg.Rate)
	start := time.Now()
	for i := range cfg.LatencyEvents {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		if err := p.Publish(ctx, rec.latencyEvent(i)); err != nil {
			return err
		}
	}
	if err := p.Flush(ctx); err != nil {
		return err
	}
	return rec.waitFor(ctx, rec.expectedAll(int64(res.Events)), cfg.Stall)
}
