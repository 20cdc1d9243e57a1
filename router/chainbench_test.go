package router_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// The chain benchmarks of issue 7: three routers a - b - c linked over
// QUIC on loopback, the stock-10x1000 subscribers (10 connections with
// 1,000 stock subscriptions each) at the far router c, one publisher of
// ~200-byte stock events at the near router a, client batching on; exact
// and Bloom forwarding, and exact with subscribers taking borrowed events
// (client.Options.OnBorrowedEvent: the same routers, less client work).
// Everything runs in this process, so CPU figures are the whole process:
// three routers and eleven clients.
//
//	go test -run XXX -bench 'Chain' -benchtime 50000x ./router

// Certificate common names of the deployment local.StartMesh creates: the
// routers present the node certificate on links, clients the client one.
const (
	nodeCN   = "sift-node"
	clientCN = "sift-client"
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
	mesh    *local.Mesh
	matched []bool // matched[i]: w.Events[i] matches some subscription at c
}

// setupChain starts the chain with the given forwarding mode and
// installs the subscribers of shape at c (each Subscribe returns once the
// subscription is in place on every router of the chain).
func setupChain(b *testing.B, forward string, shape benchShape) *chainEnv {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := local.StartMesh(ctx, b.TempDir(), []string{"a", "b", "c"}, []local.Edge{{A: 0, B: 1}, {A: 1, B: 2}},
		func(_ int, cfg *router.Config) { cfg.Forward = forward })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Stop() })
	near, far := m.Routers[0], m.Routers[2]
	be := &benchEnv{shape: shape, sentinel: make(chan struct{}, shape.conns), metrics: far.Router.Metrics()}
	for _, r := range m.Routers {
		be.routers = append(be.routers, r.Router.Metrics())
	}
	be.cpu = func() (time.Duration, bool) { return cpuclock.Process(), false }
	w := be.subscribeAll(b, far.Dial)
	be.dialPublisher(b, near.Dial, w)
	idx := match.NewFast(match.FastConfig{})
	for i, f := range w.Filters {
		if err := idx.Insert(match.ID(i), f); err != nil {
			b.Fatal(err)
		}
	}
	ce := &chainEnv{benchEnv: be, mesh: m, matched: make([]bool, len(be.events))}
	for i, e := range be.events {
		ce.matched[i] = len(idx.Match(e, nil)) > 0
	}
	be.warmUp(b)
	return ce
}

// wireBytes is the frame bytes that crossed the chain's links (a to b and b to
// c, data and control) and the bytes the publisher sent to a.
type wireBytes struct{ links, published float64 }

func (ce *chainEnv) wire() wireBytes {
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
	ce.pub.Publish(ctx, match.MustEvent(match.Attr{Name: "sentinel", Value: match.Bool(true)}))
	ce.pub.Flush(ctx)
	ce.waitSentinels(b)
	all := time.Since(start)
	b.StopTimer()
	stopProfile()
	cpu1, _ := ce.cpu()
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
	b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N)*1e6, "cpu-s/Mevents")
	b.ReportMetric(float64(percentile(ce.lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(ce.lat, 0.99).Microseconds()), "p99-µs")
	if delivered > 0 {
		b.ReportMetric((w1.links-w0.links)/float64(delivered), "link-B/delivered")
		b.ReportMetric(2*(w1.published-w0.published)/float64(delivered), "flood-B/delivered")
	}
	b.ReportMetric(float64(delivered)/float64(b.N)*100, "delivered-%")
	if v.forward == router.ForwardExact {
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
	probe, err := ce.mesh.Routers[2].Dial(ctx, "probe", client.Options{})
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
