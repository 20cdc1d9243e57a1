package router_test

import (
	"cmp"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// The chain benchmarks of issue 7: three routers a - b - c linked over
// QUIC on loopback, the stock-10x1000 subscribers (10 connections with
// 1,000 stock subscriptions each) at the far router c, one publisher of
// ~200-byte stock events at the near router a, client batching on; exact
// and Bloom forwarding, and exact with subscribers taking borrowed events
// (client.Options.OnBorrowedEvent: the same routers, less client work).
// By default everything runs in this process, so CPU figures are the whole
// process: three routers and eleven clients (SIFT_BENCH_PROFILE and
// `go tool pprof -tags` split them). Against three siftd processes
// (externalChain, bench/chain-processes.sh) the routers run as deployed
// and each one's CPU is reported too.
//
//	go test -run XXX -bench 'Chain$' -benchtime 100000x ./router
//	bench/chain-processes.sh exact 100000x 3

// Certificate common names of the deployment local.StartMesh creates (a
// development folder, certs.Init): the routers present its router
// certificate on links, clients the client one. The per-connection byte
// counters are labelled by these names.
const (
	nodeCN   = certs.AnyRouter
	clientCN = certs.DevClientName
)

var forwardModes = []string{router.ForwardExact, router.ForwardBloom}

// chainVariant is a chain benchmark setup: the forwarding mode and the
// subscribers' shape (benchShapes).
type chainVariant struct {
	name    string
	forward string
	shape   benchShape
}

var chainVariants = []chainVariant{
	{router.ForwardExact, router.ForwardExact, stockShape},
	{router.ForwardBloom, router.ForwardBloom, stockShape},
	{router.ForwardExact + "-borrowed", router.ForwardExact, stockBorrowedShape},
}

type chainEnv struct {
	*benchEnv
	mesh    *local.Mesh // nil: an external chain (externalChain)
	matched []bool      // matched[i]: w.Events[i] matches some subscription at c
	// routerCPU, for an external chain, reads each siftd's CPU (a, b, c).
	routerCPU []func() time.Duration
	far       dialFunc // connects a client to c
}

// setupChain starts the chain with the given forwarding mode, or uses an
// external one (externalChain), and installs the subscribers of shape at
// c (each Subscribe returns once the subscription is in place on every
// router of the chain).
func setupChain(b *testing.B, forward string, shape benchShape) *chainEnv {
	b.Helper()
	be := &benchEnv{shape: shape, sentinel: make(chan struct{}, shape.conns)}
	be.cpu = func() (time.Duration, bool) { return cpuclock.Process(), false }
	ce := &chainEnv{benchEnv: be}
	var near, far dialFunc
	if x, ok := externalChain(b); ok {
		if x.forward != forward {
			b.Skipf("the external chain forwards %s", x.forward)
		}
		near, far, ce.routerCPU = x.near, x.far, x.cpu
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		m, err := local.StartMesh(ctx, b.TempDir(), []string{"a", "b", "c"}, []local.Edge{{A: 0, B: 1}, {A: 1, B: 2}},
			func(_ int, cfg *router.Config) { cfg.Forward = forward })
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Stop() })
		ce.mesh, near, far = m, m.Routers[0].Dial, m.Routers[2].Dial
		be.metrics = m.Routers[2].Router.Metrics()
		for _, r := range m.Routers {
			be.routers = append(be.routers, r.Router.Metrics())
		}
	}
	ce.far = far
	w := be.subscribeAll(b, far)
	be.dialPublisher(b, near, w)
	idx := match.NewFast(match.FastConfig{})
	for i, f := range w.Filters {
		if err := idx.Insert(match.ID(i), f); err != nil {
			b.Fatal(err)
		}
	}
	ce.matched = make([]bool, len(be.events))
	for i, e := range be.events {
		ce.matched[i] = len(idx.Match(e, nil)) > 0
	}
	be.warmUp(b)
	return ce
}

// chainProcesses is a chain of three siftd processes started outside the
// benchmark.
type chainProcesses struct {
	forward   string
	near, far dialFunc
	cpu       []func() time.Duration
}

// externalChain reads SIFT_BENCH_CHAIN (HOST:PORT of a and of c, comma
// separated), SIFT_BENCH_CHAIN_PIDS (the pids of a, b and c),
// SIFT_BENCH_CHAIN_FORWARD (their --forward; default exact) and
// SIFT_BENCH_CERTS: three siftd linked a - b - c, each in its own process
// with its own settings (siftd's garbage collector defaults included), the
// clients in this one. The CPU figures then add the routers' (from /proc)
// to this process's.
func externalChain(b *testing.B) (chainProcesses, bool) {
	addrs, pids := os.Getenv("SIFT_BENCH_CHAIN"), os.Getenv("SIFT_BENCH_CHAIN_PIDS")
	if addrs == "" {
		return chainProcesses{}, false
	}
	as, ps := strings.Split(addrs, ","), strings.Split(pids, ",")
	if len(as) != 2 || len(ps) != 3 {
		b.Fatalf("SIFT_BENCH_CHAIN %q wants 2 addresses, SIFT_BENCH_CHAIN_PIDS %q 3 pids", addrs, pids)
	}
	dialAt := externalDialer(b, os.Getenv("SIFT_BENCH_CERTS"))
	x := chainProcesses{forward: cmp.Or(os.Getenv("SIFT_BENCH_CHAIN_FORWARD"), router.ForwardExact), near: dialAt(as[0]), far: dialAt(as[1])}
	for _, pid := range ps {
		x.cpu = append(x.cpu, func() time.Duration { return procCPU(b, pid) })
	}
	return x, true
}

// routersCPU returns the external routers' CPU times (nil in process).
func (ce *chainEnv) routersCPU() []time.Duration {
	var out []time.Duration
	for _, f := range ce.routerCPU {
		out = append(out, f())
	}
	return out
}

// wireBytes is the frame bytes that crossed the chain's links (a to b and b to
// c, data and control) and the bytes the publisher sent to a.
type wireBytes struct{ links, published float64 }

func (ce *chainEnv) wire() wireBytes {
	if ce.mesh == nil {
		return wireBytes{}
	}
	a, b := ce.mesh.Routers[0].Router.Metrics(), ce.mesh.Routers[1].Router.Metrics()
	return wireBytes{
		links:     connBytes(a, nodeCN, "out") + connBytes(b, nodeCN, "out"),
		published: connBytes(a, clientCN, "in"),
	}
}

// connBytes sums a router's per-connection byte counters for one peer
// certificate name and direction.
func connBytes(m *router.Metrics, peer, dir string) float64 {
	ch := make(chan prometheus.Metric, 16)
	go func() {
		m.ConnBytes.Collect(ch)
		close(ch)
	}()
	sum := 0.0
	for pm := range ch {
		var d dto.Metric
		if err := pm.Write(&d); err != nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["peer"] == peer && labels["dir"] == dir {
			sum += d.GetCounter().GetValue()
		}
	}
	return sum
}

// BenchmarkChain publishes b.N events at a as fast as batching allows and
// waits until every subscriber connection at c has received them all (a
// final sentinel event). It reports end-to-end events/s (first publish to
// last sentinel), events accepted/s at a, publish-to-deliver latency
// near saturation, whole-process CPU seconds per million events, and the
// frame bytes that crossed the two links per event delivered at c,
// against flooding (every published frame over both links).
func BenchmarkChain(b *testing.B) {
	for _, v := range chainVariants {
		b.Run(v.name, func(b *testing.B) { benchChain(b, v) })
	}
}

func benchChain(b *testing.B, v chainVariant) {
	ce := setupChain(b, v.forward, v.shape)
	ctx := context.Background()
	w0 := ce.wire()
	d0 := ce.deliveries()
	lt0 := ce.linkTableDecisions()
	cpu0, _ := ce.cpu()
	rcpu0 := ce.routersCPU()
	stopProfile := profileTimed(b)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := ce.pub.Publish(ctx, ce.event(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := ce.pub.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	accepted := time.Since(start)
	ce.endRun(b)
	all := time.Since(start)
	b.StopTimer()
	stopProfile()
	cpu1, _ := ce.cpu()
	rcpu1 := ce.routersCPU()
	w1 := ce.wire()
	delivered := 0
	for i := range b.N {
		if ce.matched[i%len(ce.matched)] {
			delivered++
		}
	}
	b.ReportMetric(float64(b.N)/all.Seconds(), "e2e-events/s")
	b.ReportMetric(float64(b.N)/accepted.Seconds(), "accepted-events/s")
	b.ReportMetric(float64(ce.deliveries()-d0)/all.Seconds(), "sub-deliveries/s")
	perM := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) * 1e6 }
	routers := time.Duration(0)
	for i, name := range []string{"a", "b", "c"}[:len(rcpu1)] {
		routers += rcpu1[i] - rcpu0[i]
		b.ReportMetric(perM(rcpu1[i]-rcpu0[i]), name+"-cpu-s/Mevents")
	}
	b.ReportMetric(perM(cpu1-cpu0+routers), "cpu-s/Mevents")
	b.ReportMetric(float64(percentile(ce.lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(ce.lat, 0.99).Microseconds()), "p99-µs")
	if delivered > 0 && ce.mesh != nil {
		b.ReportMetric((w1.links-w0.links)/float64(delivered), "link-B/delivered")
		b.ReportMetric(2*(w1.published-w0.published)/float64(delivered), "flood-B/delivered")
	}
	b.ReportMetric(float64(delivered)/float64(b.N)*100, "delivered-%")
	if v.forward == router.ForwardExact && ce.mesh != nil {
		lt1 := ce.linkTableDecisions()
		b.ReportMetric((lt1.cacheA-lt0.cacheA)/float64(b.N)*100, "a-by-cache-%")
		b.ReportMetric((lt1.witnessB-lt0.witnessB)/float64(b.N)*100, "b-by-witness-%")
	}
	b.ReportMetric(0, "ns/op")
}

// decisions counts events the link tables of a and b routed without
// matching: by a's cache, by the witness at b.
type decisions struct{ cacheA, witnessB float64 }

func (ce *chainEnv) linkTableDecisions() decisions {
	if ce.mesh == nil {
		return decisions{}
	}
	a, b := ce.mesh.Routers[0].Router.Metrics().LinkTable.Events, ce.mesh.Routers[1].Router.Metrics().LinkTable.Events
	return decisions{metricValue(a.WithLabelValues("cache")), metricValue(b.WithLabelValues("witness"))}
}

// BenchmarkChainLatency measures publish-to-deliver latency across the
// chain at low load: one event at a time, published at a and flushed,
// timed until a probe subscriber at c receives it.
func BenchmarkChainLatency(b *testing.B) {
	for _, fwd := range forwardModes {
		b.Run(fwd, func(b *testing.B) { benchChainLatency(b, fwd) })
	}
}

func benchChainLatency(b *testing.B, forward string) {
	ce := setupChain(b, forward, stockShape)
	ctx := context.Background()
	probe, err := ce.far(ctx, "probe", client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer probe.Close()
	s, err := probe.Subscribe(ctx, `ts exists`)
	if err != nil {
		b.Fatal(err)
	}
	ce.warmUp(b) // the probe's subscription restarted the routers' wait to compact
	lat := probeLatency(b, ce.pub, s, ce.stamped)
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op")
}
