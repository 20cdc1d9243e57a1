package router_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// BenchmarkInstall installs SIFT_BENCH_INSTALL_N (default 10^4) stock
// subscriptions at the last router of a chain of 1 or 3 in-process
// routers, from 20 connections with 64 subscribe requests in flight each
// (Subscribe returns once the subscription is installed on every router
// of the chain). It reports subscriptions per second over the whole
// install and over its first and last tenth, and the live heap after the
// install per subscription (all routers of the process together).
// SIFT_BENCH_INSTALL_TABLE sets the routers' Config.Table;
// SIFT_BENCH_INSTALL_BATCH (non-empty) installs from one connection with
// SubscribeBatch instead. SIFT_BENCH_INSTALL_HEAPPROFILE names a file that
// gets a heap profile taken after the install, while the routers still
// hold every subscription (go tool pprof -sample_index inuse_space).
func BenchmarkInstall(b *testing.B) {
	n := 10_000
	if s := os.Getenv("SIFT_BENCH_INSTALL_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	w, err := workload.Stock(workload.StockConfig{Subscriptions: n, Events: 1}, 1)
	if err != nil {
		b.Fatal(err)
	}
	filters := make([]string, n)
	for i, f := range w.Filters {
		filters[i] = f.String()
	}
	for _, routers := range []int{1, 3} {
		b.Run(fmt.Sprintf("routers=%d", routers), func(b *testing.B) {
			for b.Loop() {
				benchInstall(b, routers, filters)
			}
		})
	}
}

func benchInstall(b *testing.B, routers int, filters []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	names := []string{"a", "b", "c"}[:routers]
	var edges []local.Edge
	for i := 1; i < routers; i++ {
		edges = append(edges, local.Edge{A: i - 1, B: i})
	}
	m, err := local.StartMesh(ctx, b.TempDir(), names, edges, func(_ int, cfg *router.Config) {
		cfg.MaxSubscriptionsPerConn = len(filters)
		cfg.MaxLinks = 4
		cfg.Table = os.Getenv("SIFT_BENCH_INSTALL_TABLE")
	})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Stop()
	if err := m.WaitLinked(ctx); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const conns = 20
	far := m.Routers[routers-1]
	clients := make([]*client.Client, conns)
	for i := range clients {
		c, err := far.Dial(ctx, fmt.Sprintf("sub%d", i), client.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	done := make([]time.Duration, len(filters)) // when filter i was acknowledged
	start := time.Now()
	if os.Getenv("SIFT_BENCH_INSTALL_BATCH") != "" {
		installBatch(b, ctx, clients[0], filters, start, done)
	} else {
		installSingles(b, ctx, clients, filters, start, done)
	}
	total := time.Since(start)
	n := len(filters)
	tenth := n / 10
	b.ReportMetric(float64(n)/total.Seconds(), "subs/s")
	b.ReportMetric(float64(tenth)/done[tenth-1].Seconds(), "first-tenth-subs/s")
	b.ReportMetric(float64(tenth)/(total-done[n-tenth-1]).Seconds(), "last-tenth-subs/s")
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-B/sub")
	if p := os.Getenv("SIFT_BENCH_INSTALL_HEAPPROFILE"); p != "" {
		writeHeapProfile(b, p)
	}
}

// writeHeapProfile writes the heap profile of the process to path.
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// installBatch installs filters from one connection with SubscribeBatch,
// in slices of a tenth so that the first and last tenth are timed.
func installBatch(b *testing.B, ctx context.Context, c *client.Client, filters []string, start time.Time, done []time.Duration) {
	step := max(1, len(filters)/10)
	for lo := 0; lo < len(filters); lo += step {
		hi := min(lo+step, len(filters))
		if _, err := c.SubscribeBatch(ctx, filters[lo:hi], func([]int, match.Event) {}); err != nil {
			b.Fatal(err)
		}
		for i := lo; i < hi; i++ {
			done[i] = time.Since(start)
		}
	}
}

// installSingles installs filters with Subscribe from every connection,
// 64 requests in flight each.
func installSingles(b *testing.B, ctx context.Context, clients []*client.Client, filters []string, start time.Time, done []time.Duration) {
	const inFlight = 64
	conns := len(clients)
	var wg sync.WaitGroup
	next := make(chan int)
	go func() {
		for i := range filters {
			next <- i
		}
		close(next)
	}()
	var errOnce sync.Once
	var firstErr error
	for c := range conns * inFlight {
		cl := clients[c%conns]
		wg.Go(func() {
			for i := range next {
				if _, err := cl.Subscribe(ctx, filters[i]); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				done[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}
