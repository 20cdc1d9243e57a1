package router_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench"
	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/internal/cpuclock"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

const (
	benchEvents = 20000 // distinct events, cycled
	stampEvery  = 64    // one event in stampEvery carries a send time
)

// benchShape is a benchmark setup: subscriber connections and the filters
// of each. The shape of issue 6 is "stock-10x1000": one router, 10
// subscriber connections with 1,000 stock subscriptions each, one
// publisher of stock events of about 200 bytes (JSON). The others isolate
// the router's own costs: "all-1x1" delivers every event to one
// connection (transport and writer, trivial matching), "none" has no
// subscribers (accepting and decoding only). "stock-10x1000-borrowed" is
// stock-10x1000 with subscribers taking borrowed events
// (client.Options.OnBorrowedEvent instead of OnEvent): the same router
// work, less client work.
type benchShape struct {
	name        string
	conns, subs int
	filters     func(w workload.Workload, conn int) []match.Filter
	borrowed    bool // the subscribers use OnBorrowedEvent
}

// stockFilters gives subscriber connection c its 1,000 stock filters.
func stockFilters(w workload.Workload, c int) []match.Filter { return w.Filters[c*1000 : (c+1)*1000] }

func volumeExists(workload.Workload, int) []match.Filter {
	return []match.Filter{match.MustParse("volume exists")}
}

// The shapes of issue 6, with owned and with borrowed events.
var (
	stockShape         = benchShape{name: "stock-10x1000", conns: 10, subs: 1000, filters: stockFilters}
	stockBorrowedShape = benchShape{name: "stock-10x1000-borrowed", conns: 10, subs: 1000, filters: stockFilters, borrowed: true}
)

var benchShapes = []benchShape{
	stockShape,
	{name: "all-1x1", conns: 1, subs: 1, filters: volumeExists},
	{name: "none"},
	stockBorrowedShape,
}

type benchEnv struct {
	shape    benchShape
	dial     dialFunc
	metrics  *router.Metrics              // nil for an external router
	cpu      func() (time.Duration, bool) // router CPU; false: the whole process
	pub      *client.Client
	events   []match.Event // without a timestamp
	stamped  []match.Event // the same events with ts = 0, rewritten per send
	received []counter     // per subscriber connection: subscription deliveries
	mu       sync.Mutex
	lat      []time.Duration
	sentinel chan struct{}
	subs     []*client.Client
	// routers are the metrics of every router the events cross (nil: an
	// external router): a slow consumer there (a client or a link whose
	// queue overflowed) drops events, so the sentinels may never come.
	routers []*router.Metrics
}

// dialFunc connects a client to a router.
type dialFunc func(ctx context.Context, name string, opts client.Options) (*client.Client, error)

// padded adds attributes that bring the stock event to about 200 bytes of
// JSON, like an order id and an account.
func padded(e match.Event, i int) []match.Attr {
	attrs := []match.Attr{
		{Name: "order", Value: match.Str(fmt.Sprintf("ORD-%012d-%s", i, strings.Repeat("x", 40)))},
		{Name: "account", Value: match.Str(fmt.Sprintf("ACC-%08d", i%50000))},
	}
	for j := range e.Len() {
		attrs = append(attrs, e.At(j))
	}
	return attrs
}

func setupBench(b *testing.B, shape benchShape) *benchEnv {
	b.Helper()
	be := &benchEnv{shape: shape, sentinel: make(chan struct{}, shape.conns)}
	be.useRouter(b)
	w := be.subscribeAll(b, be.dial)
	be.dialPublisher(b, be.dial, w)
	be.warmUp(b)
	return be
}

// warmEvents is how many events a benchmark routes before its timer
// starts: more than a router waits, once its subscriptions stop changing,
// before it compacts its index (compactAfter: a quarter of its
// subscriptions, 2,500 here), so the timed phase measures the steady state
// of a router that has been running, not the one-off compaction and the
// uncompacted index right after subscribing (which cost ~3 CPU-us per
// event over a 20,000-event chain run).
const warmEvents = 5000

// warmUp publishes warmEvents unstamped events and waits until every
// subscriber connection has seen the end marker after them.
func (be *benchEnv) warmUp(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	for i := range warmEvents {
		if err := be.pub.Publish(ctx, be.events[i%len(be.events)]); err != nil {
			b.Fatal(err)
		}
	}
	be.endRun(b)
}

// endRun publishes the end marker, flushes, and waits until every
// subscriber connection has seen it (waitSentinels): the events published
// before it have all been delivered.
func (be *benchEnv) endRun(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	if err := be.pub.Publish(ctx, match.MustEvent(match.Attr{Name: "sentinel", Value: match.Bool(true)})); err != nil {
		b.Fatal(err)
	}
	if err := be.pub.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	be.waitSentinels(b)
}

// subscribeAll dials the shape's subscriber connections and installs
// their filters (and an end-marker subscription each), connections in
// parallel, returning the workload.
func (be *benchEnv) subscribeAll(b *testing.B, dial dialFunc) workload.Workload {
	b.Helper()
	shape := be.shape
	w, err := workload.Stock(workload.StockConfig{Subscriptions: max(shape.conns*shape.subs, 1), Events: benchEvents}, 1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	be.received = make([]counter, shape.conns) // the callbacks point into it
	for c := range shape.conns {
		opts := client.Options{OnEvent: be.onEventAt(c)}
		if shape.borrowed {
			opts.OnEvent, opts.OnBorrowedEvent = nil, opts.OnEvent // it reads events during the call only
		}
		cl, err := dial(ctx, fmt.Sprintf("sub-%d", c), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cl.Close() })
		be.subs = append(be.subs, cl)
	}
	errs := make(chan error, shape.conns)
	for c, cl := range be.subs {
		go func() {
			for _, f := range shape.filters(w, c) {
				if _, err := cl.Subscribe(ctx, f.String()); err != nil {
					errs <- err
					return
				}
			}
			_, err := cl.Subscribe(ctx, sentinelFilter)
			if err == nil && c == 0 {
				_, err = cl.Subscribe(ctx, stampFilter)
			}
			errs <- err
		}()
	}
	for range shape.conns {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	return w
}

// dialPublisher connects the publisher and prepares the events of w,
// padded to about 200 bytes, with stamped copies for latency.
func (be *benchEnv) dialPublisher(b *testing.B, dial dialFunc, w workload.Workload) {
	b.Helper()
	var err error
	be.pub, err = dial(context.Background(), "pub", client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.pub.Close() })
	for i, e := range w.Events {
		attrs := padded(e, i)
		be.events = append(be.events, match.MustEvent(attrs...))
		be.stamped = append(be.stamped, match.MustEvent(append(attrs, match.Attr{Name: "ts", Value: match.Int(0)})...))
	}
}

// useRouter starts an in-process router, or, when SIFT_BENCH_ROUTER
// (HOST:PORT), SIFT_BENCH_CERTS (certificates folder) and
// SIFT_BENCH_ROUTER_PID are set, uses that external siftd and measures its
// CPU alone from /proc.
func (be *benchEnv) useRouter(b *testing.B) {
	addr, dir, pid := os.Getenv("SIFT_BENCH_ROUTER"), os.Getenv("SIFT_BENCH_CERTS"), os.Getenv("SIFT_BENCH_ROUTER_PID")
	if addr == "" {
		env, err := local.Start(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { env.Stop() })
		be.dial, be.metrics = env.Dial, env.Router.Metrics()
		be.routers = []*router.Metrics{be.metrics}
		be.cpu = func() (time.Duration, bool) { return cpuclock.Process(), false }
		return
	}
	be.dial = externalDialer(b, dir)(addr)
	be.cpu = func() (time.Duration, bool) { return procCPU(b, pid), true }
}

// procCPU reads a process's user+system CPU time from /proc/PID/stat.
func procCPU(b *testing.B, pid string) time.Duration {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)      // field 14 of stat
	stime, _ := strconv.ParseInt(fields[12], 10, 64)      // field 15
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
}

// The subscriptions the harness adds to the shape's: the end marker on
// every subscriber connection, and the stamped events on the first one
// (latency is sampled once per stamped event, not per matching
// subscription).
const (
	sentinelFilter = `sentinel exists`
	stampFilter    = `ts exists`
)

// counter counts one subscriber connection's deliveries: local on the
// connection's reader goroutine (the callbacks run there, one at a time),
// published to n at each sentinel, the only time the harness reads it
// (as an application would count: no atomic operation per delivery). It
// is padded so that connections do not share a cache line.
type counter struct {
	n     atomic.Int64
	local int64
	_     [48]byte
}

// onEventAt returns the callback of subscriber connection c: it tells the
// end marker and stamped events apart by subscription, so the harness
// costs a string comparison per delivery. It keeps nothing of the event,
// so it serves OnBorrowedEvent too.
func (be *benchEnv) onEventAt(c int) func(*client.Subscription, match.Event) {
	n := &be.received[c]
	return func(s *client.Subscription, e match.Event) {
		switch s.Filter() {
		case sentinelFilter:
			n.n.Store(n.local)
			be.sentinel <- struct{}{}
		case stampFilter:
			ts, _ := e.Get("ts")
			d := time.Duration(time.Now().UnixNano() - ts.AsInt())
			be.mu.Lock()
			be.lat = append(be.lat, d)
			be.mu.Unlock()
		default:
			n.local++
		}
	}
}

// deliveries returns the subscription deliveries counted up to each
// connection's last sentinel.
func (be *benchEnv) deliveries() int64 {
	var sum int64
	for i := range be.received {
		sum += be.received[i].n.Load()
	}
	return sum
}

// event returns the i-th event to publish, stamped with the send time one
// time in stampEvery.
func (be *benchEnv) event(i int) match.Event {
	if i%stampEvery != 0 {
		return be.events[i%len(be.events)]
	}
	return stamp(be.stamped[i%len(be.stamped)])
}

func stamp(e match.Event) match.Event {
	attrs := make([]match.Attr, e.Len())
	for j := range attrs {
		attrs[j] = e.At(j)
		if attrs[j].Name == "ts" {
			attrs[j].Value = match.Int(time.Now().UnixNano())
		}
	}
	return match.MustEvent(attrs...)
}

// waitSentinels waits for every subscriber connection's sentinel. It fails
// the benchmark, rather than wait forever, when a subscriber connection
// ends, when a router closes a slow consumer (the machine could not keep
// up and events were dropped), or when no sentinel comes for sentinelWait.
func (be *benchEnv) waitSentinels(b *testing.B) {
	slow0 := be.slowConsumers()
	done := be.anyDone()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for got := 0; got < be.shape.conns; {
		select {
		case <-be.sentinel:
			got, last = got+1, time.Now()
		case <-done:
			b.Fatalf("a subscriber connection ended: %v", be.firstErr())
		case <-tick.C:
			if n := be.slowConsumers(); n > slow0 {
				b.Fatalf("a router closed %v slow consumers (a client or link queue overflowed): the machine did not keep up and events were dropped", n-slow0)
			}
			if time.Since(last) > sentinelWait {
				b.Fatalf("%d of %d sentinels after waiting %v", got, be.shape.conns, sentinelWait)
			}
		}
	}
}

// sentinelWait bounds the wait for the next sentinel.
const sentinelWait = 2 * time.Minute

// slowConsumers sums the slow consumers the routers closed.
func (be *benchEnv) slowConsumers() float64 {
	sum := 0.0
	for _, m := range be.routers {
		sum += metricValue(m.SlowConsumers)
	}
	return sum
}

func (be *benchEnv) anyDone() <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	for _, c := range be.subs {
		go func() {
			select {
			case <-c.Done():
				once.Do(func() { close(done) })
			case <-done:
			}
		}()
	}
	return done
}

func (be *benchEnv) firstErr() error {
	for _, c := range be.subs {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

// counters returns the router's events-out and matches counters (zero for
// an external router).
func (be *benchEnv) counters() (out, matches float64) {
	if be.metrics == nil {
		return 0, 0
	}
	return metricValue(be.metrics.EventsOut), metricValue(be.metrics.Matches)
}

// profileTimed starts a CPU profile of the timed phase alone (not the
// setup, which -cpuprofile would include: installing 10^4 subscriptions
// costs more than routing 50,000 events) when SIFT_BENCH_PROFILE names a
// folder; the file is named after the benchmark. It skips the N=1 probe
// run. It returns the function that stops the profile.
//
//	SIFT_BENCH_PROFILE=/tmp/prof go test -run XXX -bench 'Throughput/stock' -benchtime 50000x ./router
func profileTimed(b *testing.B) func() {
	dir := os.Getenv("SIFT_BENCH_PROFILE")
	if dir == "" || b.N == 1 {
		return func() {}
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(b.Name()) + ".pprof"
	stop, err := bench.StartCPUProfile(dir, name)
	if err != nil {
		b.Fatal(err)
	}
	return stop
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[int(float64(len(ds)-1)*p)]
}

// BenchmarkThroughput publishes b.N events as fast as batching allows and
// waits until every subscriber connection has received them all (a final
// sentinel event, in publish order). It reports events accepted per second
// (publish until Flush returned), subscription deliveries and
// per-connection deliveries per second (until the last sentinel),
// selectivity, publish-to-deliver latency near saturation, and CPU seconds
// per million events: of the whole process (router and clients) in
// process, or of the router alone with an external siftd (see useRouter).
func BenchmarkThroughput(b *testing.B) {
	for _, shape := range benchShapes {
		b.Run(shape.name, func(b *testing.B) { benchThroughput(b, shape) })
	}
}

func benchThroughput(b *testing.B, shape benchShape) {
	be := setupBench(b, shape)
	ctx := context.Background()
	out0, match0 := be.counters()
	d0 := be.deliveries()
	cpu0, _ := be.cpu()
	stopProfile := profileTimed(b)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := be.pub.Publish(ctx, be.event(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := be.pub.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	accepted := time.Since(start)
	be.endRun(b)
	all := time.Since(start)
	b.StopTimer()
	stopProfile()
	cpu1, routerOnly := be.cpu()
	cpu := cpu1 - cpu0
	out1, match1 := be.counters()
	outs := out1 - out0 - float64(shape.conns)
	matches := match1 - match0 - float64(shape.conns) // the sentinels
	if shape.conns > 0 {
		matches -= float64((b.N + stampEvery - 1) / stampEvery) // the stamp subscription
	}
	b.ReportMetric(float64(b.N)/accepted.Seconds(), "events/s")
	if be.metrics != nil {
		b.ReportMetric(outs/all.Seconds(), "conn-deliveries/s")
	}
	b.ReportMetric(float64(be.deliveries()-d0)/all.Seconds(), "sub-deliveries/s")
	if n := shape.conns * shape.subs; n > 0 && be.metrics != nil {
		b.ReportMetric(matches/float64(b.N)/float64(n)*100, "selectivity-%")
	}
	if routerOnly {
		b.ReportMetric(cpu.Seconds()/float64(b.N)*1e6, "router-cpu-s/Mevents")
	} else {
		b.ReportMetric(cpu.Seconds()/float64(b.N)*1e6, "cpu-s/Mevents")
	}
	b.ReportMetric(float64(percentile(be.lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(be.lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op")
	st := be.pub.ConnectionStats()
	b.Logf("publisher connection: %d packets sent, %d lost, smoothed RTT %v", st.PacketsSent, st.PacketsLost, st.SmoothedRTT)
}

// BenchmarkLatency measures publish-to-deliver latency at low load: one
// event at a time, sent at once (Flush), timed until a subscriber that
// matches it receives it; the next event waits for that.
func BenchmarkLatency(b *testing.B) {
	for _, shape := range benchShapes[:2] {
		b.Run(shape.name, func(b *testing.B) { benchLatency(b, shape) })
	}
}

// probeLatency times b.N round trips: publish one stamped event, flush,
// and wait until the probe subscription s has it. The timer runs only
// around the round trips.
func probeLatency(b *testing.B, pub *client.Client, s *client.Subscription, stamped []match.Event) []time.Duration {
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := pub.Publish(ctx, stamp(stamped[i%len(stamped)])); err != nil {
			b.Fatal(err)
		}
		if err := pub.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Next(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	return lat
}

func benchLatency(b *testing.B, shape benchShape) {
	be := setupBench(b, shape)
	ctx := context.Background()
	probe, err := be.dial(ctx, "probe", client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer probe.Close()
	s, err := probe.Subscribe(ctx, `ts exists`)
	if err != nil {
		b.Fatal(err)
	}
	be.warmUp(b) // the probe's subscription restarted the router's wait to compact
	lat := probeLatency(b, be.pub, s, be.stamped)
	be.mu.Lock()
	defer be.mu.Unlock()
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(percentile(be.lat, 0.5).Microseconds()), "sub-p50-µs")
}
