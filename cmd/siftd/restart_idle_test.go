package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// TestIdleClientNoticesRestart: a subscriber that only listens learns of a
// router's crash and restart from its own heartbeats (padded control
// frames every KeepAlive, large enough to draw the new process's
// stateless reset), within a few periods instead of at the 30 s idle
// timeout. Control: without client heartbeats this waits for the idle
// timeout and fails.
func TestIdleClientNoticesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newCluster(t, ctx, nil)
	c.config = "" // the router's defaults: a 30 s idle timeout
	r := c.start("r1")

	cl, err := certs.Load(c.certDir, certs.Client)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := client.Dial(ctx, r.addr, client.Options{TLS: cl.ClientConfig(), Name: "idle-test",
		KeepAlive: 200 * time.Millisecond, IdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Subscribe(ctx, "a exists"); err != nil {
		t.Fatal(err)
	}
	// Idle on purpose: packets still in flight from the subscribe would
	// draw the reset themselves and prove nothing about heartbeats.
	time.Sleep(1500 * time.Millisecond)
	c.restart(r)
	start := time.Now()
	select {
	case <-conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("the idle client had not noticed the restart after 10 s")
	}
	if err := conn.Err(); err == nil || !regexp.MustCompile(`(?i)stateless reset`).MatchString(err.Error()) {
		t.Fatalf("the client ended with %v, want a stateless reset", err)
	}
	t.Logf("the idle client noticed the restart %v after it: %v", time.Since(start).Round(time.Millisecond), conn.Err())
}
