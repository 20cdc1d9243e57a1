package router_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// durableOn returns a config modifier turning durable delivery on with
// the given pubends (pubend -> router) and members.
func durableOn(pubends map[string]string, members ...string) func(*router.Config) {
	return func(c *router.Config) {
		c.Durable = &router.DurableConfig{Pubends: pubends, Members: members}
	}
}

func chain(mods ...func(*router.Config)) func(*router.Config) {
	return func(c *router.Config) {
		for _, m := range mods {
			m(c)
		}
	}
}

// durableReader consumes a durable subscription like an application that
// stores what it consumed: it keeps the events and its CT, checks that
// ticks grow per pubend, and acknowledges every few messages.
type durableReader struct {
	t      testing.TB
	s      *client.DurableSubscription
	ct     client.CT
	events []match.Event
	ticks  []durable.Tick
	gaps   int
}

func newDurableReader(t testing.TB, s *client.DurableSubscription) *durableReader {
	return &durableReader{t: t, s: s, ct: client.CT{}}
}

// until reads messages until done says so, or fails the test at the
// deadline.
func (r *durableReader) until(ctx context.Context, done func() bool) error {
	n := 0
	for !done() {
		select {
		case m, ok := <-r.s.Messages():
			if !ok {
				return fmt.Errorf("subscription ended: %v", r.s.Err())
			}
			switch m.Kind {
			case client.DurableEvent:
				if m.Tick <= r.ct[m.Pubend] {
					return fmt.Errorf("tick %d of %s at or below the CT %d", m.Tick, m.Pubend, r.ct[m.Pubend])
				}
				r.events = append(r.events, m.Event)
				r.ticks = append(r.ticks, m.Tick)
			case client.DurableGap:
				r.gaps++
			}
			m.Advance(r.ct)
			if n++; n%20 == 0 {
				r.s.Ack(r.ct.Clone())
			}
		case <-time.After(50 * time.Millisecond):
			r.s.Ack(r.ct.Clone())
		case <-ctx.Done():
			return fmt.Errorf("after %d events: %w", len(r.events), ctx.Err())
		}
	}
	return nil
}

func durableOpts(env *local.Env, addrs ...string) client.DurableOptions {
	if len(addrs) == 0 {
		addrs = []string{env.Addr}
	}
	return client.DurableOptions{Options: client.Options{TLS: env.ClientTLS}, Routers: addrs,
		RetryTimeout: 30 * time.Second, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
}

// TestDurableOneRouter: a router hosting pubend "a" and a durable
// subscriber; every matching event arrives once, in order, and a
// subscriber that comes back with its CT gets the rest and nothing twice.
func TestDurableOneRouter(t *testing.T) {
	env := start(t, durableOn(map[string]string{"a": "local"}, "local"))
	ctx := testCtx(t)
	const filter = `symbol == "IBM"`
	s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: durableOpts(env), ID: "s1", Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: durableOpts(env), Pubend: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	evs := stockEvents(3, 600)
	for _, e := range evs[:300] {
		if _, err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := expected(filter, evs)
	half := len(expected(filter, evs[:300]))
	r := newDurableReader(t, s)
	if err := r.until(ctx, func() bool { return len(r.events) >= half }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, e := range evs[300:] {
		if _, err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s2, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: durableOpts(env), ID: "s1", Filter: filter, CT: r.ct})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	r.s = s2
	if err := r.until(ctx, func() bool { return len(r.events) >= len(want) }); err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(r.events, want); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events (%d before the reconnection), CT %v", len(r.events), half, r.ct)
	_, err = client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: durableOpts(env), ID: "s1", Filter: `symbol == "SAP"`})
	if !errors.Is(err, client.ErrRefused) {
		t.Fatalf("re-subscribing with another filter: got %v, want a refusal", err)
	}
	// Unsubscribed, the id is forgotten: it may come back with any filter.
	if err := s2.Unsubscribe(ctx); err != nil {
		t.Fatal(err)
	}
	s3, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: durableOpts(env), ID: "s1", Filter: `symbol == "SAP"`})
	if err != nil {
		t.Fatalf("subscribing an unsubscribed id again: %v", err)
	}
	s3.Close()
}

var _ = slog.Default
