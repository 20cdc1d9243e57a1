package router_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// linkWatch is a slog handler that reports each "link up" log line, so
// tests wait for links without sleeping.
type linkWatch struct{ up, refused chan struct{} }

func newLinkWatch() *linkWatch {
	return &linkWatch{up: make(chan struct{}, 64), refused: make(chan struct{}, 64)}
}

func (w *linkWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *linkWatch) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *linkWatch) WithGroup(string) slog.Handler            { return w }
func (w *linkWatch) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "link up":
		w.up <- struct{}{}
	case "link refused":
		w.refused <- struct{}{}
	}
	return nil
}

// waitUp waits for the next "link up" line.
func (w *linkWatch) waitUp(t *testing.T) {
	t.Helper()
	select {
	case <-w.up:
	case <-testCtx(t).Done():
		t.Fatal("no link came up")
	}
}

// linkedRouter returns a router config modifier: name, the certificates
// of the deployment in certDir (so linked routers share a CA), links on,
// the peers to dial, a listen address and the log watcher.
func linkedRouter(t *testing.T, name, certDir, listen string, w *linkWatch, peers ...string) func(*router.Config) {
	node, err := certs.Load(certDir, certs.Node)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *router.Config) {
		c.Name = name
		c.TLS = node.ServerConfig(nil)
		c.PeerTLS = node.ClientConfig()
		c.MaxLinks = 4
		c.Peers = peers
		if listen != "" {
			c.Listen = listen
		}
		c.Logger = slog.New(w)
	}
}

// freeUDPAddr returns a loopback UDP address nothing listens on now.
func freeUDPAddr(t *testing.T) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().String()
}

// startAt runs a router in dir with mod; its clients use the
// certificates of certDir. The caller stops it.
func startAt(t *testing.T, dir, certDir string, mod func(*router.Config)) *local.Env {
	env, err := local.Start(dir, mod)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := certs.Load(certDir, certs.Client)
	if err != nil {
		t.Fatal(err)
	}
	env.ClientTLS = cl.ClientConfig()
	return env
}

func subscribe(t *testing.T, c *client.Client, filter string) {
	t.Helper()
	if _, err := c.Subscribe(testCtx(t), filter); err != nil {
		t.Fatal(err)
	}
}

// checkLink asserts a router has exactly one link, to peer, forwarding
// and holding exactly the given filters (in any spelling).
func checkLink(t *testing.T, env *local.Env, peer string, forwarded, received []string) {
	t.Helper()
	routes, err := env.Router.Routes(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].Peer != peer {
		t.Fatalf("%s: links %+v, want one to %s", env.Router.Name(), routes, peer)
	}
	got := routes[0]
	if !slices.Equal(got.Forwarded, canonical(forwarded)) || !slices.Equal(got.Received, canonical(received)) {
		t.Fatalf("%s: link to %s forwards %q and holds %q, want %q and %q", env.Router.Name(), peer, got.Forwarded, got.Received, canonical(forwarded), canonical(received))
	}
}

func canonical(fs []string) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, match.MustParse(f).String())
	}
	slices.Sort(out)
	return out
}

// TestLinkResync runs two routers over QUIC: b dials a before a exists
// (redial with backoff), the link comes up and both sides resynchronise
// their subscriptions; a subscribe is acknowledged only once the
// neighbour installed it; when a stops, b redials, and a restarted a
// (new subscriptions, same address) gets b's subscriptions by snapshot
// while b drops the old a's.
func TestLinkResync(t *testing.T) {
	certDir := deploymentCerts(t)
	addrA := freeUDPAddr(t)
	wa, wb := newLinkWatch(), newLinkWatch()

	b := startAt(t, t.TempDir(), certDir, linkedRouter(t, "b", certDir, "", wb, addrA))
	defer b.Stop()
	cb := dial(t, b, "cb", client.Options{})
	subscribe(t, cb, `symbol == "IBM"`) // no link yet: acknowledged at once

	dirA := filepath.Join(t.TempDir(), "a1")
	a := startAt(t, dirA, certDir, linkedRouter(t, "a", certDir, addrA, wa))
	wa.waitUp(t)
	wb.waitUp(t)
	ca := dial(t, a, "ca", client.Options{})
	subscribe(t, ca, "price > 10")
	subscribe(t, ca, "price > 20") // covered: only a barrier crosses; acked after b has both
	checkLink(t, a, "b", []string{"price > 10"}, []string{`symbol == "IBM"`})
	checkLink(t, b, "a", []string{`symbol == "IBM"`}, []string{"price > 10"})

	ca.Close()
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	dirA2 := filepath.Join(t.TempDir(), "a2")
	a2 := startAt(t, dirA2, certDir, linkedRouter(t, "a", certDir, addrA, wa))
	defer a2.Stop()
	wa.waitUp(t)
	wb.waitUp(t)
	ca2 := dial(t, a2, "ca2", client.Options{})
	subscribe(t, ca2, "volume < 5")
	checkLink(t, a2, "b", []string{"volume < 5"}, []string{`symbol == "IBM"`})
	checkLink(t, b, "a", []string{`symbol == "IBM"`}, []string{"volume < 5"})
}

// TestLinkRefusedWithoutLinks: a router that takes no links (MaxLinks 0)
// refuses a LinkHello with a log line on both sides and keeps acking its
// clients' subscriptions at once.
func TestLinkRefusedWithoutLinks(t *testing.T) {
	shared, err := local.Start(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	certDir := shared.CertsDir
	if err := shared.Stop(); err != nil {
		t.Fatal(err)
	}
	wa, wb := newLinkWatch(), newLinkWatch()
	noLinks := linkedRouter(t, "a", certDir, "", wa)
	a := startAt(t, t.TempDir(), certDir, func(c *router.Config) { noLinks(c); c.MaxLinks = 0 })
	defer a.Stop()
	b := startAt(t, t.TempDir(), certDir, linkedRouter(t, "b", certDir, "", wb, a.Addr))
	defer b.Stop()
	for _, w := range []*linkWatch{wa, wb} {
		select {
		case <-w.refused:
		case <-testCtx(t).Done():
			t.Fatal("no link refused")
		}
	}
	subscribe(t, dial(t, a, "ca", client.Options{}), "price > 1")
	for _, env := range []*local.Env{a, b} {
		routes, err := env.Router.Routes(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(routes) != 0 {
			t.Fatalf("%s: links %+v, want none", env.Router.Name(), routes)
		}
	}
}

// TestLinkShutdownForwardsAccepted: a router shut down right after its
// publisher's events were accepted still forwards every one of them to
// its neighbour's subscriber. The neighbour reads the link's data stream
// to its end before closing the link, although the shutdown notice on the
// control stream can arrive first.
func TestLinkShutdownForwardsAccepted(t *testing.T) {
	certDir := deploymentCerts(t)
	addrA := freeUDPAddr(t)
	wa, wb := newLinkWatch(), newLinkWatch()
	a := startAt(t, t.TempDir(), certDir, linkedRouter(t, "a", certDir, addrA, wa))
	b := startAt(t, t.TempDir(), certDir, linkedRouter(t, "b", certDir, "", wb, addrA))
	defer b.Stop()
	wa.waitUp(t)
	wb.waitUp(t)
	ctx := testCtx(t)
	sub := dial(t, b, "sub", client.Options{SubscriptionBuffer: 1 << 16})
	s, err := sub.Subscribe(ctx, "seq >= 0") // acknowledged once a holds it
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t, a, "pub", client.Options{})
	evs := stockEvents(7, 20_000)
	if err := pub.Publish(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	got := make([]match.Event, 0, len(evs))
	for len(got) < len(evs) {
		select {
		case e := <-s.Events():
			got = append(got, e)
		case <-time.After(5 * time.Second):
			t.Fatalf("b's subscriber has %d of the %d events a accepted before it stopped", len(got), len(evs))
		}
	}
	if err := sameEvents(got, evs); err != nil {
		t.Fatal(err)
	}
}
