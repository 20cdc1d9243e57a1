package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// TestRestartIsNoticedAtOnce: siftd keeps its stateless-reset key in the
// data folder, so after a crash (SIGKILL) and a restart on the same
// address a connected client's next packet is answered by a stateless
// reset, and the client fails at once instead of after the 30 s idle
// timeout. Control, run by hand: deleting stateless-reset.key before the
// restart makes the Flush below wait for the idle timeout.
//
// The client's next packet here is a Publish, on purpose: quic-go answers
// only packets larger than 42 bytes with a reset (so that two endpoints
// never reset each other in a loop), and a keep-alive is smaller. A
// client that only listens therefore learns of the restart by its idle
// timeout, not by a reset. (An earlier version of this test waited for an
// idle `sift sub` to be reset; it passed only when a retransmission
// happened to reach the new process, and failed after a 30 s idle timeout
// when the restart took a little longer under load.)
//
// The router listens on :0 and is restarted on the address it bound;
// binding it again is retried if another process took it meanwhile.
func TestRestartIsNoticedAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newCluster(t, ctx, nil)
	c.config = "" // the defaults: a 30 s idle timeout, 10 s keep-alives
	r := c.start("r1")

	cl, err := certs.Load(c.certDir, certs.Client)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := client.Dial(ctx, r.addr, client.Options{TLS: cl.ClientConfig(), Name: "restart-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Subscribe(ctx, "a exists"); err != nil {
		t.Fatal(err)
	}

	c.restart(r)
	ev := match.MustEvent(match.Attr{Name: "a", Value: match.Str(strings.Repeat("x", 200))})
	start := time.Now()
	err = conn.Publish(ctx, ev)
	if err == nil {
		err = conn.Flush(ctx)
	}
	if err == nil || !regexp.MustCompile(`(?i)stateless reset`).MatchString(err.Error()) {
		t.Fatalf("publish after the restart: %v, want a stateless reset error", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the client noticed after %v; the idle timeout, not a reset, ended it", d)
	}
	t.Logf("the client noticed the restart %v after publishing: %v", time.Since(start).Round(time.Microsecond), err)
}

// TestRestartedRouterRelinksAtOnce: in the chain r1 - r2 - r3 (r2 dials
// r1, r3 dials r2) with the default timeouts and no traffic, r2 is
// SIGKILLed and restarted on its address and data folder. Both links must
// be back within seconds, not at the 30 s idle timeout. Keep-alives are
// too small to draw a stateless reset (see TestRestartIsNoticedAtOnce), so
// two mechanisms make it so: links exchange padded heartbeats every second
// (r3's draws a reset from the new r2, and r3 redials), and the new r2's
// hello carries a new incarnation, so r1 replaces its stale link instead
// of refusing the dial as "already linked to r2".
func TestRestartedRouterRelinksAtOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := newCluster(t, ctx, nil)
	c.config = "" // the defaults: a 30 s idle timeout, 10 s keep-alives
	r1 := c.start("r1")
	r2 := c.start("r2", r1)
	r3 := c.start("r3", r2)
	c.waitLinks(r1, r2)
	c.waitLinks(r2, r1, r3)
	c.waitLinks(r3, r2)
	// Quiet links are the point: right after linking, routes, acks and
	// their QUIC acknowledgements are still in flight, and r3's next one
	// would draw a stateless reset from the new r2 with or without
	// heartbeats. Quietness has no event to wait for, hence a sleep.
	time.Sleep(1500 * time.Millisecond)
	c.restart(r2)
	start := time.Now()
	c.waitLinks(r2, r1, r3)
	d := time.Since(start)
	if d > 10*time.Second {
		t.Errorf("r2's links came back %v after its restart; want seconds", d.Round(time.Millisecond))
	}
	t.Logf("r2's links came back %v after its restart", d.Round(time.Millisecond))
}
