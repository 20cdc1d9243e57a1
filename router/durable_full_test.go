package router_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/pebblestore"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// fullStore is the Pebble store with a switch that makes every write and
// sync fail as a full disk does.
type fullStore struct {
	router.DurableStore
	full atomic.Bool
}

func (s *fullStore) Apply(b *durable.Batch, sync bool) error {
	if s.full.Load() {
		return fmt.Errorf("pebble: write: %w", syscall.ENOSPC)
	}
	return s.DurableStore.Apply(b, sync)
}

func (s *fullStore) Flush() error {
	if s.full.Load() {
		return fmt.Errorf("pebble: sync: %w", syscall.ENOSPC)
	}
	return s.DurableStore.Flush()
}

// TestDurableFullDisk: with the durable store failing every write (a full
// disk), the router stays up, plain events keep reaching a plain
// subscriber, durable publishes are refused (counted, and not
// acknowledged: a Flush times out) and a durable subscriber gets nothing
// new; once writes work again the publisher's events are logged and the
// subscriber receives every one exactly once, in order.
func TestDurableFullDisk(t *testing.T) {
	var st fullStore
	env := start(t, func(c *router.Config) {
		c.Durable = &router.DurableConfig{Pubends: map[string]string{"a": "local"}, Members: []string{"local"},
			OpenStore: func(dir string) (router.DurableStore, error) {
				ps, err := pebblestore.Open(dir, nil)
				st.DurableStore = ps
				return &st, err
			}}
	})
	ctx := testCtx(t)
	const filter = `symbol == "IBM"`
	s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: durableOpts(env), ID: "s1", Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: durableOpts(env), Pubend: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	evs := stockEvents(5, 400)
	publish := func(es []match.Event) {
		t.Helper()
		for _, e := range es {
			if _, err := pub.Publish(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(evs[:200])
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r := newDurableReader(t, s)
	first := expected(filter, evs[:200])
	if err := r.until(ctx, func() bool { return len(r.events) >= len(first) }); err != nil {
		t.Fatal(err)
	}

	st.full.Store(true)
	plain, err := dial(t, env, "plain", client.Options{}).Subscribe(ctx, `x >= 0`)
	if err != nil {
		t.Fatal(err)
	}
	publish(evs[200:300]) // taken by the pubend, their batch fails to be written
	fctx, cancel := context.WithTimeout(ctx, time.Second)
	if err := pub.Flush(fctx); err == nil {
		t.Fatal("durable events were acknowledged while the store could not write")
	}
	cancel()
	publish(evs[300:]) // refused: the store is known to fail
	fctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
	pub.Flush(fctx)
	cancel()
	var plainEvs []match.Event
	for i := range 50 {
		plainEvs = append(plainEvs, match.MustEvent(match.Attr{Name: "x", Value: match.Int(int64(i))}))
	}
	pp := dial(t, env, "plainpub", client.Options{})
	if err := pp.Publish(ctx, plainEvs...); err != nil {
		t.Fatal(err)
	}
	if err := pp.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, plain, len(plainEvs)); len(got) != len(plainEvs) {
		t.Fatalf("plain subscriber got %d of %d events while the durable store was full", len(got), len(plainEvs))
	}
	if n := counterValue(t, env, "sift_durable_publishes_refused_total"); n == 0 {
		t.Fatal("no durable publish counted as refused")
	}
	if v := gaugeValue(t, env, "sift_durable_store_full"); v != 1 {
		t.Fatalf("sift_durable_store_full is %v while the store fails, want 1", v)
	}
	if len(r.events) != len(first) {
		t.Fatalf("the durable subscriber got %d events, want still %d", len(r.events), len(first))
	}

	st.full.Store(false)
	if err := pub.Flush(ctx); err != nil {
		t.Fatalf("after space came back: %v", err)
	}
	want := expected(filter, evs)
	if err := r.until(ctx, func() bool { return len(r.events) >= len(want) }); err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(r.events, want); err != nil {
		t.Fatal(err)
	}
}

// gaugeValue reads a gauge (without labels) from a router's registry.
func gaugeValue(t *testing.T, env *local.Env, name string) float64 {
	t.Helper()
	mfs, err := env.Router.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
