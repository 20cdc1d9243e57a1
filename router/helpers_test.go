package router_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// deploymentCerts writes one deployment's CA and certificates into a
// temporary folder, for routers started with local.StartIn to share.
func deploymentCerts(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := certs.Init(dir, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// start runs a router for the test and stops it at cleanup.
func start(t testing.TB, mod func(*router.Config)) *local.Env {
	t.Helper()
	env, err := local.Start(t.TempDir(), mod)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return env
}

func dial(t testing.TB, env *local.Env, name string, opts client.Options) *client.Client {
	t.Helper()
	c, err := env.Dial(testCtx(t), name, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testCtx bounds every blocking call of a test, so that a bug shows as a
// failure rather than a hang.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var symbols = []string{"IBM", "MSFT", "AAPL", "GOOG", "ORCL", "SAP"}

// stockEvents returns n deterministic stock events from seed, each with a
// sequence attribute.
func stockEvents(seed uint64, n int) []match.Event {
	rng := rand.New(rand.NewPCG(seed, 0))
	evs := make([]match.Event, n)
	for i := range evs {
		evs[i] = match.MustEvent(
			match.Attr{Name: "seq", Value: match.Int(int64(i))},
			match.Attr{Name: "symbol", Value: match.Str(symbols[rng.IntN(len(symbols))])},
			match.Attr{Name: "price", Value: match.MustFloat(float64(rng.IntN(20000)) / 100)},
			match.Attr{Name: "volume", Value: match.Int(int64(rng.IntN(10000)))},
			match.Attr{Name: "exchange", Value: match.Str([]string{"NYSE", "NASDAQ", "XETRA"}[rng.IntN(3)])},
		)
	}
	return evs
}

// expected returns the events f matches, in order: the reference is
// Filter.Matches, as in match.Scan.
func expected(f string, evs []match.Event) []match.Event {
	scan := match.NewScan()
	scan.Insert(0, match.MustParse(f))
	var out []match.Event
	for _, e := range evs {
		if len(scan.Match(e, nil)) == 1 {
			out = append(out, e)
		}
	}
	return out
}

// collect reads n events from s.
func collect(t testing.TB, s *client.Subscription, n int) []match.Event {
	t.Helper()
	out, err := collectErr(testCtx(t), s, n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// collectErr reads n events from s; it may run in any goroutine.
func collectErr(ctx context.Context, s *client.Subscription, n int) ([]match.Event, error) {
	out := make([]match.Event, 0, n)
	for len(out) < n {
		e, err := s.Next(ctx)
		if err != nil {
			return out, fmt.Errorf("subscription %q after %d of %d events: %w", s.Filter(), len(out), n, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func sameEvents(got, want []match.Event) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			return fmt.Errorf("event %d: got %v, want %v", i, got[i], want[i])
		}
	}
	return nil
}

// withAttr returns e with one more attribute.
func withAttr(e match.Event, name string, v match.Value) match.Event {
	attrs := []match.Attr{{Name: name, Value: v}}
	for i := range e.Len() {
		attrs = append(attrs, e.At(i))
	}
	return match.MustEvent(attrs...)
}

// localStart runs a router the test stops itself.
func localStart(t testing.TB) (*local.Env, error) {
	return local.Start(t.TempDir(), nil)
}

// metricValue reads a counter's or gauge's current value.
func metricValue(m prometheus.Metric) float64 {
	var d dto.Metric
	m.Write(&d)
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}
