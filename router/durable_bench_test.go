package router_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// durableLine starts routers r0 - r1 - ... - r(n-1) in a line over QUIC,
// pubend "p" at r0, every router a member, and returns them.
func durableLine(b testing.TB, n int) []*local.Env {
	shared, err := local.Start(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	certDir := shared.CertsDir
	shared.Stop()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i)
	}
	envs := make([]*local.Env, n)
	for i := range names {
		w := newLinkWatch()
		var peers []string
		if i > 0 {
			peers = []string{envs[i-1].Addr}
		}
		env, err := local.StartIn(certDir, b.TempDir(), chain(linkedRouterTB(b, names[i], certDir, w, peers...),
			durableOn(map[string]string{"p": "r0"}, names...)))
		if err != nil {
			b.Fatal(err)
		}
		envs[i] = env
		b.Cleanup(func() { env.Stop() })
		for range peers {
			select {
			case <-w.up:
			case <-time.After(30 * time.Second):
				b.Fatal("no link came up")
			}
		}
	}
	return envs
}

// linkedRouterTB is linkedRouter for tests and benchmarks alike.
func linkedRouterTB(b testing.TB, name, certDir string, w *linkWatch, peers ...string) func(*router.Config) {
	node, err := certs.Load(certDir, certs.Node)
	if err != nil {
		b.Fatal(err)
	}
	return func(c *router.Config) {
		c.Name = name
		c.TLS = node.ServerConfig(nil)
		c.PeerTLS = node.ClientConfig()
		c.MaxLinks = 4
		c.Peers = peers
		c.Logger = slog.New(w)
	}
}

// BenchmarkDurableDelivery measures the aggregate durable delivery rate
// through one SHB: a router hosting the pubend and -durable.subs durable
// subscribers (each on its own connection, filters on one of six symbols,
// so an event reaches about a sixth of them); one durable publisher. It
// reports delivered events per second (every subscriber read and
// acknowledged everything).
func BenchmarkDurableDelivery(b *testing.B) {
	for _, subs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) { benchDurableDelivery(b, subs) })
	}
}

func benchDurableDelivery(b *testing.B, nsubs int) {
	env := start(b, durableOn(map[string]string{"p": "local"}, "local"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	evs := stockEvents(5, b.N)
	var delivered atomic.Int64
	var want int64
	var wg sync.WaitGroup
	subs := make([]*client.DurableSubscription, nsubs)
	wants := make([]int64, nsubs)
	var setup sync.WaitGroup
	var failed atomic.Pointer[error]
	for w := range 8 { // subscribe from a few goroutines: setup is not measured
		setup.Add(1)
		go func() {
			defer setup.Done()
			for i := w; i < nsubs; i += 8 {
				f := fmt.Sprintf(`symbol == "%s"`, symbols[i%len(symbols)])
				wants[i] = int64(len(expected(f, evs)))
				s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: durableOpts(env),
					ID: fmt.Sprintf("s%d", i), Filter: f})
				if err != nil {
					failed.Store(&err)
					return
				}
				subs[i] = s
			}
		}()
	}
	setup.Wait()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	for i, s := range subs {
		defer s.Close()
		want += wants[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			drain(ctx, s, wants[i], &delivered)
		}()
	}
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: durableOpts(env), Pubend: "p"})
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	b.ResetTimer()
	began := time.Now()
	for _, e := range evs {
		if _, err := pub.Publish(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	wg.Wait()
	el := time.Since(began)
	b.StopTimer()
	if got := delivered.Load(); got != want {
		for _, s := range subs {
			if err := s.Err(); err != nil {
				b.Errorf("subscription %s ended: %v", s.ID(), err)
			}
		}
		b.Fatalf("delivered %d events, want %d", got, want)
	}
	b.ReportMetric(float64(want)/el.Seconds(), "delivered/s")
	b.ReportMetric(float64(len(evs))/el.Seconds(), "published/s")
	b.ReportMetric(gathered(b, env, "sift_durable_syncs_total")/el.Seconds(), "syncs/s")
	b.ReportMetric(gathered(b, env, "sift_durable_overflows_total"), "overflows")
	b.ReportMetric(1000*gathered(b, env, "sift_durable_sync_seconds"), "ms/sync")
}

// gathered returns the value of a counter of env's router.
func gathered(b testing.TB, env *local.Env, name string) float64 {
	mfs, err := env.Router.Metrics().Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			if h := mf.GetMetric()[0].GetHistogram(); h != nil {
				return h.GetSampleSum() / float64(h.GetSampleCount())
			}
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// drain reads n events from s, acknowledging every 64 messages and when
// idle after receiving an event (a subscriber must acknowledge the events
// each session received; acknowledging idle silences only costs the SHB
// work, as sift sub --durable also avoids).
func drain(ctx context.Context, s *client.DurableSubscription, n int64, count *atomic.Int64) {
	ct := client.CT{}
	got, since := int64(0), 0
	for got < n {
		select {
		case m, ok := <-s.Messages():
			if !ok {
				return
			}
			m.Advance(ct)
			if m.Kind != client.DurableEvent {
				continue
			}
			got++
			count.Add(1)
			if since++; since >= 64 {
				s.Ack(ct.Clone())
				since = 0
			}
		case <-time.After(20 * time.Millisecond):
			if since > 0 {
				s.Ack(ct.Clone())
				since = 0
			}
		case <-ctx.Done():
			return
		}
	}
	s.Ack(ct.Clone())
}

// BenchmarkDurableLatency measures end-to-end durable latency over a line
// of routers: pubend at r0, one durable subscriber at the last router
// (hops = routers - 1), one event at a time: from Publish to the event
// reaching the subscriber. It reports the median and the 99th percentile.
func BenchmarkDurableLatency(b *testing.B) {
	for _, hops := range []int{1, 5} {
		b.Run(fmt.Sprintf("hops=%d", hops), func(b *testing.B) { benchDurableLatency(b, hops) })
	}
}

func benchDurableLatency(b *testing.B, hops int) {
	envs := durableLine(b, hops+1)
	last := envs[hops]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: durableOpts(last), ID: "lat", Filter: `*`})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: durableOpts(envs[0]), Pubend: "p"})
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	ct := client.CT{}
	wait := func() {
		for {
			select {
			case m := <-s.Messages():
				m.Advance(ct)
				if m.Kind == client.DurableEvent {
					s.Ack(ct.Clone())
					return
				}
			case <-ctx.Done():
				b.Fatal("no event")
			}
		}
	}
	warm := match.MustEvent(match.Attr{Name: "seq", Value: match.Int(-1)})
	pub.Publish(ctx, warm)
	wait()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		e := match.MustEvent(match.Attr{Name: "seq", Value: match.Int(int64(i))})
		t0 := time.Now()
		if _, err := pub.Publish(ctx, e); err != nil {
			b.Fatal(err)
		}
		wait()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
