package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// muteLink links to env's router as a neighbour router named "mute" that
// never acknowledges anything: every subscription at env's router then
// waits for Ready forever. It returns once the router has sent its
// snapshot, so the link is up.
func muteLink(t *testing.T, ctx context.Context, env *local.Env) {
	t.Helper()
	node, err := certs.Load(env.CertsDir, certs.Node)
	if err != nil {
		t.Fatal(err)
	}
	tlsConf := node.ClientConfig()
	tlsConf.ServerName = "127.0.0.1"
	qc, err := quic.DialAddr(ctx, env.Addr, tlsConf, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	ctrl, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hello := &wire.LinkHello{MinVersion: wire.Version, MaxVersion: wire.Version, Name: "mute", Reach: []string{"mute"}}
	if _, err := ctrl.Write(wire.AppendFrame(nil, hello)); err != nil {
		t.Fatal(err)
	}
	data, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := data.Write(wire.AppendFrame(nil, &wire.Attach{Version: wire.Version})); err != nil {
		t.Fatal(err)
	}
	fr := wire.NewFrameReader(ctrl, wire.HardMaxFrame)
	for {
		typ, body, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("mute link: %v", err)
		}
		m, err := wire.Decode(typ, body)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*wire.Routes); ok && r.Snapshot {
			break
		}
	}
	go func() { // keep reading, acknowledge nothing
		for {
			if _, _, err := fr.ReadFrame(); err != nil {
				return
			}
		}
	}()
}

// TestNoWaitReady: behind a neighbour that never acknowledges, Subscribe
// waits for Ready (so it runs into its deadline), while under NoWaitReady
// it returns at once and the subscription gets events; a refused filter
// under NoWaitReady ends the subscription with the router's error.
func TestNoWaitReady(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env, err := local.Start(t.TempDir(), func(c *router.Config) { c.MaxLinks = 2 })
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	muteLink(t, ctx, env)

	waiting, err := env.Dial(ctx, "waiting", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer waiting.Close()
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	if _, err := waiting.Subscribe(short, `symbol == "IBM"`); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Subscribe behind a mute neighbour: %v, want the deadline (Ready cannot come)", err)
	}

	eager, err := env.Dial(ctx, "eager", client.Options{NoWaitReady: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eager.Close()
	sub, err := eager.Subscribe(ctx, `symbol == "IBM"`)
	if err != nil {
		t.Fatalf("Subscribe with NoWaitReady: %v", err)
	}
	bad, err := eager.Subscribe(ctx, `symbol ==`)
	if err != nil {
		t.Fatalf("Subscribe with NoWaitReady returned the refusal at once: %v", err)
	}
	if _, err := bad.Next(ctx); wire.CodeOf(err) != wire.CodeBadFilter {
		t.Fatalf("refused subscription ended with %v, want a bad-filter error", err)
	}

	pub, err := env.Dial(ctx, "pub", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	// The router handles a connection's control frames in order, so the
	// bad filter's refusal (seen above) proves "IBM" is installed.
	want := match.MustEvent(match.Attr{Name: "symbol", Value: match.Str("IBM")}, match.Attr{Name: "n", Value: match.Int(1)})
	if err := pub.Publish(ctx, match.MustEvent(match.Attr{Name: "symbol", Value: match.Str("SAP")})); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Fatalf("got %s, want %s", got, want)
	}
}
