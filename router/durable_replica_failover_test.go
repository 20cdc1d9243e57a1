package router_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router/client"
)

// TestReplicatedPubendFailover: pubend p replicated on routers a, b and c
// (linked through h); a durable publisher that knows the three and durable
// subscribers at every router. Halfway through the events the leader's
// router is stopped: a new leader takes over, the publisher follows it
// (the others refuse it as not leading), and once the old leader is back
// every subscriber has every matching event exactly once.
func TestReplicatedPubendFailover(t *testing.T) {
	rc := newReplicaChain(t)
	ch := rc.durableChain
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	all := []string{ch.addrs["a"], ch.addrs["b"], ch.addrs["c"]}
	filters, readers := rc.subscribeEverywhere(ctx, t)
	popts := durableOpts(ch.envs["a"], all...)
	popts.DialTimeout = time.Second // a stopped router's address is given up on after 1 s
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: popts, Pubend: "p"})
	if err != nil {
		t.Fatalf("publisher: %v\n%s", err, ch.status())
	}
	defer pub.Close()
	evs := stockEvents(24, 1200)
	if err := publishPaced(ctx, pub, evs[:600]); err != nil {
		t.Fatalf("first half: %v\n%s", err, ch.status())
	}
	old := rc.leader()
	if old == "" {
		t.Fatalf("no router says it leads p\n%s", ch.status())
	}
	env := ch.envs[old]
	delete(ch.envs, old)
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	t.Logf("stopped the leader's router %s", old)
	// The first event after the stop: its acknowledgement comes from the
	// new leader (the time is logged, not asserted).
	if _, err := pub.Publish(ctx, evs[600]); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatalf("first event after the stop: %v\n%s", err, ch.status())
	}
	t.Logf("failover: the first event after the stop acknowledged %v after it", time.Since(stopped).Round(time.Millisecond))
	if err := publishPaced(ctx, pub, evs[601:]); err != nil {
		t.Fatalf("second half: %v\n%s", err, ch.status())
	}
	now := rc.leader()
	if now == old || now == "" {
		t.Fatalf("leader after the stop: %q (was %s)\n%s", now, old, ch.status())
	}
	t.Logf("new leader %s; the second half was acknowledged %v after the stop", now, time.Since(stopped).Round(time.Millisecond))
	waitPortFree(t, ch.addrs[old])
	rc.start(old)
	for n, f := range filters {
		want := expected(f, evs)
		r := readers[n]
		if err := r.until(ctx, func() bool { return len(r.events) >= len(want) }); err != nil {
			t.Fatalf("subscriber at %s: %v (want %d events; CT %v)\n%s", n, err, len(want), r.ct, ch.status())
		}
		if err := sameEvents(r.events, want); err != nil {
			t.Fatalf("subscriber at %s: %v", n, err)
		}
		t.Logf("subscriber at %s: %d events, exactly once", n, len(r.events))
	}
}

// waitPortFree waits (up to 5 s) until a stopped router's UDP address can
// be bound again.
func waitPortFree(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pc, err := net.ListenPacket("udp", addr)
		if err == nil {
			pc.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("address %s still in use: %v", addr, err)
		}
	}
}
