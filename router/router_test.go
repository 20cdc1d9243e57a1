package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
)

// TestPubSubSeveralClients: three subscriber connections with different
// filters (one with two subscriptions) and two concurrent publishers; each
// subscription gets exactly the matching events, in publish order per
// publisher.
func TestPubSubSeveralClients(t *testing.T) {
	env := start(t, nil)
	ctx := testCtx(t)
	filters := [][]string{
		{`symbol == "IBM"`},
		{`price < 50 && exchange prefix "NY"`, `volume >= 9000`},
		{`*`},
	}
	var subs [][]*client.Subscription
	for i, fs := range filters {
		c := dial(t, env, "sub", client.Options{})
		var row []*client.Subscription
		for _, f := range fs {
			s, err := c.Subscribe(ctx, f)
			if err != nil {
				t.Fatalf("subscriber %d: %v", i, err)
			}
			row = append(row, s)
		}
		subs = append(subs, row)
	}
	const perPub = 3000
	pubs := [][]match.Event{stockEvents(1, perPub), stockEvents(2, perPub)}
	// Every subscription is read concurrently from the start: deliveries of
	// one connection share a stream (see the client package's caveat).
	var readers sync.WaitGroup
	for i, row := range subs {
		for j, s := range row {
			var want [2][]match.Event
			n := 0
			for p, evs := range pubs {
				for _, e := range expected(filters[i][j], evs) {
					want[p] = append(want[p], withAttr(e, "pub", match.Int(int64(p))))
				}
				n += len(want[p])
			}
			readers.Add(1)
			go func() {
				defer readers.Done()
				got, err := collectErr(ctx, s, n)
				if err != nil {
					t.Error(err)
					return
				}
				var byPub [2][]match.Event
				for _, e := range got {
					v, _ := e.Get("pub")
					byPub[v.AsInt()] = append(byPub[v.AsInt()], e)
				}
				for p := range pubs {
					if err := sameEvents(byPub[p], want[p]); err != nil {
						t.Errorf("filter %q, publisher %d: %v", filters[i][j], p, err)
					}
				}
			}()
		}
	}
	var wg sync.WaitGroup
	for i, evs := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := dial(t, env, "pub", client.Options{BatchSize: 64})
			for _, e := range evs {
				if err := p.Publish(ctx, withAttr(e, "pub", match.Int(int64(i)))); err != nil {
					t.Error(err)
					return
				}
			}
			if err := p.Flush(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	readers.Wait()
	m := env.Router.Metrics()
	if got := metricValue(m.EventsIn); got != 2*perPub {
		t.Errorf("events in: %v, want %d", got, 2*perPub)
	}
}

// TestBadFilter: the error names the column, nothing is installed and the
// connection stays usable.
func TestBadFilter(t *testing.T) {
	env := start(t, nil)
	ctx := testCtx(t)
	c := dial(t, env, "c", client.Options{})
	_, err := c.Subscribe(ctx, `symbol == "IBM" && price <`)
	var pe *wire.ProtocolError
	if !errors.As(err, &pe) || pe.Code != wire.CodeBadFilter || !strings.Contains(pe.Msg, "col 27") {
		t.Fatalf("got %v, want bad-filter naming col 27", err)
	}
	assertSubscriptions(t, env.Router, 0)
	if _, err := c.Subscribe(ctx, `symbol == "IBM"`); err != nil {
		t.Fatalf("after a bad filter the connection must stay up: %v", err)
	}
	assertSubscriptions(t, env.Router, 1)
}

// TestTooManySubscriptions: the limit refuses the extra subscription and
// installs nothing.
func TestTooManySubscriptions(t *testing.T) {
	env := start(t, func(c *router.Config) { c.MaxSubscriptionsPerConn = 2 })
	ctx := testCtx(t)
	c := dial(t, env, "c", client.Options{})
	for _, f := range []string{`a == 1`, `a == 2`} {
		if _, err := c.Subscribe(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Subscribe(ctx, `a == 3`)
	if wire.CodeOf(err) != wire.CodeTooManySubscriptions {
		t.Fatalf("got %v, want too-many-subscriptions", err)
	}
	assertSubscriptions(t, env.Router, 2)
	other := dial(t, env, "other", client.Options{})
	if _, err := other.Subscribe(ctx, `a == 3`); err != nil {
		t.Fatalf("the limit is per connection: %v", err)
	}
}

// TestUnsubscribe: after Unsubscribe the channel is closed and the router
// holds nothing.
func TestUnsubscribe(t *testing.T) {
	env := start(t, nil)
	ctx := testCtx(t)
	c := dial(t, env, "c", client.Options{})
	s, err := c.Subscribe(ctx, `*`)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Unsubscribe(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-s.Events(); ok || !errors.Is(s.Err(), client.ErrUnsubscribed) {
		t.Fatalf("channel still open or err %v", s.Err())
	}
	assertSubscriptions(t, env.Router, 0)
}

func assertSubscriptions(t *testing.T, r *router.Router, want int) {
	t.Helper()
	s, err := r.Subscriptions(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if s.Subscriptions != want {
		t.Fatalf("router holds %d subscriptions, want %d: %+v", s.Subscriptions, want, s)
	}
}

// TestSlowConsumer: a subscriber that stops reading is disconnected with a
// clear error and a metric; the publisher and a fast subscriber carry on.
// The publisher goes in rounds that the fast subscriber reads completely,
// so only the slow one can fall behind, by construction rather than timing.
func TestSlowConsumer(t *testing.T) {
	const queue, round, rounds = 4096, 1000, 40
	env := start(t, func(c *router.Config) { c.SendQueue = queue })
	ctx := testCtx(t)
	slow := dial(t, env, "slow", client.Options{SubscriptionBuffer: 1})
	slowSub, err := slow.Subscribe(ctx, `*`)
	if err != nil {
		t.Fatal(err)
	}
	fast := dial(t, env, "fast", client.Options{})
	fastSub, err := fast.Subscribe(ctx, `*`)
	if err != nil {
		t.Fatal(err)
	}
	p := dial(t, env, "pub", client.Options{})
	evs := stockEvents(3, round*rounds)
	for i := 0; i < len(evs); i += round {
		if err := p.Publish(ctx, evs[i:i+round]...); err != nil {
			t.Fatal(err)
		}
		if err := p.Flush(ctx); err != nil {
			t.Fatalf("publisher blocked or failed by a slow consumer: %v", err)
		}
		if err := sameEvents(collect(t, fastSub, round), evs[i:i+round]); err != nil {
			t.Fatalf("fast subscriber, round %d: %v", i/round, err)
		}
	}
	<-slow.Done()
	if wire.CodeOf(slow.Err()) != wire.CodeSlowConsumer || !strings.Contains(slow.Err().Error(), "slow consumer") {
		t.Fatalf("slow client ended with %v, want slow-consumer", slow.Err())
	}
	for range slowSub.Events() { // drain what arrived before; the channel must close
	}
	if got := metricValue(env.Router.Metrics().SlowConsumers); got != 1 {
		t.Fatalf("slow consumer metric %v, want 1", got)
	}
}

// TestResetKeyPersisted: the stateless-reset key is created once in the
// data folder and reused by the next router on it.
func TestResetKeyPersisted(t *testing.T) {
	env := start(t, nil)
	path := filepath.Join(filepath.Dir(env.CertsDir), "data", router.ResetKeyFile)
	key, err := os.ReadFile(path)
	if err != nil || len(key) != 32 {
		t.Fatalf("reset key: %d bytes, %v", len(key), err)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("reset key mode %v, want 0600", info.Mode())
	}
	cfg := router.Config{Name: "again", TLS: env.ClientTLS, DataDir: filepath.Dir(path), Index: "scan", Logger: slog.New(slog.DiscardHandler)}
	r2, err := router.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r2.Serve(ctx)
	again, _ := os.ReadFile(path)
	if string(again) != string(key) {
		t.Fatal("a second router on the same data folder replaced the key")
	}
}

// TestHTTPEndpoints: health, subscription summary and metrics.
func TestHTTPEndpoints(t *testing.T) {
	env := start(t, nil)
	c := dial(t, env, "c", client.Options{})
	if _, err := c.Subscribe(testCtx(t), `symbol == "IBM"`); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(env.Router.Handler())
	defer srv.Close()
	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s %s", path, resp.Status, b)
		}
		return string(b)
	}
	if got := get("/healthz"); got != "ok\n" {
		t.Fatalf("healthz %q", got)
	}
	var sum router.SubscriptionSummary
	if err := json.Unmarshal([]byte(get("/debug/subscriptions?filters=1")), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Subscriptions != 1 || len(sum.Interfaces) != 1 || sum.Interfaces[0].Filters[0] != `1: symbol == "IBM"` {
		t.Fatalf("summary %+v", sum)
	}
	metrics := get("/metrics")
	for _, name := range []string{"sift_router_subscriptions 1", "sift_router_connections 1", "sift_router_events_in_total",
		"sift_router_publish_to_deliver_seconds_bucket", "sift_router_conn_bytes_total", "sift_router_slow_consumers_total"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("metrics lack %s", name)
		}
	}
}

// TestGracefulShutdown: accepted events are delivered before the router
// closes connections with the shutdown code.
func TestGracefulShutdown(t *testing.T) {
	env, err := localStart(t)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	sub := dial(t, env, "sub", client.Options{})
	s, err := sub.Subscribe(ctx, `*`)
	if err != nil {
		t.Fatal(err)
	}
	p := dial(t, env, "pub", client.Options{})
	evs := stockEvents(4, 500)
	p.Publish(ctx, evs...)
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	var got []match.Event
	for e := range s.Events() {
		got = append(got, e)
	}
	if err := sameEvents(got, evs); err != nil {
		t.Fatalf("after shutdown: %v", err)
	}
	if wire.CodeOf(s.Err()) != wire.CodeShutdown {
		t.Fatalf("subscription ended with %v, want shutdown", s.Err())
	}
}
