package router_test

import (
	"context"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// silentAssistant connects to env's router as a client that offers RTO
// assistance and never answers; it returns a channel that receives a value
// per query the router sends it. It returns once its offer is handled.
func silentAssistant(t *testing.T, ctx context.Context, env *local.Env) <-chan struct{} {
	t.Helper()
	qc, err := quic.DialAddr(ctx, env.Addr, env.ClientTLS.Clone(), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	ctrl, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	write := func(s *quic.Stream, m wire.Message) {
		if _, err := s.Write(wire.AppendFrame(nil, m)); err != nil {
			t.Fatal(err)
		}
	}
	write(ctrl, &wire.Hello{MinVersion: wire.Version, MaxVersion: wire.Version, Role: wire.RoleClient, Name: "silent"})
	fr := wire.NewFrameReader(ctrl, wire.HardMaxFrame)
	if m, err := fr.ReadMessage(); err != nil {
		t.Fatal(err)
	} else if _, ok := m.(*wire.Welcome); !ok {
		t.Fatalf("router answered hello with %s", m.Type())
	}
	data, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	write(data, &wire.Attach{Version: wire.Version})
	write(ctrl, &wire.AssistOffer{Modes: wire.AssistRTO})
	write(ctrl, &wire.Subscribe{ID: 1, Filter: `never == 1`}) // acknowledged after the offer is handled
	if m, err := fr.ReadMessage(); err != nil {
		t.Fatal(err)
	} else if a, ok := m.(*wire.Ack); !ok || a.About != wire.TypeSubscribe {
		t.Fatalf("router answered subscribe with %v", m)
	}
	queries := make(chan struct{}, 1024)
	go func() {
		for {
			m, err := fr.ReadMessage()
			if err != nil {
				return
			}
			if _, ok := m.(*wire.RTOQuery); ok {
				queries <- struct{}{}
			}
		}
	}()
	return queries
}

// TestRTOSilentAssistantTimesOut: an assistant that never answers holds a
// subscription up only until the RTO timeout; the router then places the
// filter itself, the subscription is acknowledged and gets its events.
func TestRTOSilentAssistantTimesOut(t *testing.T) {
	ctx := testCtx(t)
	env := start(t, func(c *router.Config) {
		c.MaxLinks = 1
		c.Assist = router.AssistConfig{RTO: "verify", Timeout: 100 * time.Millisecond}
	})
	queries := silentAssistant(t, ctx, env)
	sub := dial(t, env, "sub", client.Options{})
	var subs []*client.Subscription
	for _, f := range []string{`symbol == "IBM"`, `symbol == "IBM" && price < 50`, `price > 100`} {
		s, err := sub.Subscribe(ctx, f) // returns only once placed
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	if len(queries) == 0 {
		t.Fatal("the router sent the silent assistant no query: the timeout path was not taken")
	}
	am := env.Router.Metrics().Assist
	if fb := metricValue(am.Placements.WithLabelValues("rto", "fallback")); fb == 0 {
		t.Fatal("no RTO fallback counted")
	}
	evs := stockEvents(3, 300)
	pub := dial(t, env, "pub", client.Options{})
	if err := pub.Publish(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{`symbol == "IBM"`, `symbol == "IBM" && price < 50`, `price > 100`} {
		want := expected(f, evs)
		if err := sameEvents(collect(t, subs[i], len(want)), want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
