package router_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// replicaChain is routers a, b and c, each linked to a hub router h: a,
// b and c hold the replicas of pubend "p" (DurableConfig.Replicas), and
// every router is an SHB too. Any one of a, b and c can stop without
// cutting the other two apart.
type replicaChain struct {
	*durableChain
}

func newReplicaChain(t *testing.T) *replicaChain {
	ch := &durableChain{t: t, certDir: deploymentCerts(t), dirs: map[string]string{}, addrs: map[string]string{},
		peers: map[string][]string{"h": nil, "a": {"h"}, "b": {"h"}, "c": {"h"}}, envs: map[string]*local.Env{}}
	base := t.TempDir()
	for _, n := range []string{"h", "a", "b", "c"} {
		ch.dirs[n] = filepath.Join(base, n)
		ch.addrs[n] = freeUDPAddr(t)
	}
	rc := &replicaChain{ch}
	for _, n := range []string{"h", "a", "b", "c"} {
		rc.start(n)
	}
	t.Cleanup(func() {
		for _, env := range ch.envs {
			env.Stop()
		}
	})
	return rc
}

func (rc *replicaChain) start(n string) {
	ch := rc.durableChain
	ch.t.Helper()
	w := newLinkWatch()
	var peers []string
	for _, p := range ch.peers[n] {
		peers = append(peers, ch.addrs[p])
	}
	env, err := local.StartIn(ch.certDir, ch.dirs[n], chain(linkedRouter(ch.t, n, ch.certDir, ch.addrs[n], w, peers...),
		func(c *router.Config) {
			c.Durable = &router.DurableConfig{Pubends: map[string]string{}, Members: []string{"h", "a", "b", "c"},
				Replicas: map[string][]string{"p": {"a", "b", "c"}}}
			c.Logger = slog.New(&teeLog{w: w, rec: &ch.rec})
		}))
	if err != nil {
		ch.t.Fatalf("start %s: %v", n, err)
	}
	ch.envs[n] = env
	for range peers {
		w.waitUp(ch.t)
	}
}

// preferredLeader waits (up to 20 s) until a, the first of p's replicas
// and so the one the others hand leadership to (replica.Config.Preferred),
// says it leads p, and returns it: leadership stays there while every
// replica runs.
func (rc *replicaChain) preferredLeader(t *testing.T) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); rc.leader() != "a"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a does not lead p (leader %q)\n%s", rc.leader(), rc.status())
		}
	}
	return "a"
}

// leader returns the router that last said it leads p.
func (rc *replicaChain) leader() string {
	rc.rec.mu.Lock()
	defer rc.rec.mu.Unlock()
	for i := len(rc.rec.lines) - 1; i >= 0; i-- {
		l := rc.rec.lines[i]
		if strings.Contains(l, "replicated pubends led here") && strings.Contains(l, "pubends=[p]") {
			for _, n := range []string{"a", "b", "c"} {
				if strings.Contains(l, "router="+n+" ") {
					return n
				}
			}
		}
	}
	return ""
}

// TestReplicatedPubend: pubend p replicated on routers a, b and c (linked
// through h); a durable publisher that knows the three routers finds the
// leader (the others refuse it as not leading), and durable subscribers
// at every router get every matching event exactly once (stopping the
// leader's router: TestReplicatedPubendFailover).
func TestReplicatedPubend(t *testing.T) {
	rc := newReplicaChain(t)
	ch := rc.durableChain
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	all := []string{ch.addrs["a"], ch.addrs["b"], ch.addrs["c"]}
	filters, readers := rc.subscribeEverywhere(ctx, t)
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{
		DurableOptions: durableOpts(ch.envs["a"], all...), Pubend: "p"})
	if err != nil {
		t.Fatalf("publisher: %v\n%s", err, ch.status())
	}
	defer pub.Close()
	evs := stockEvents(24, 1200)
	if err := publishPaced(ctx, pub, evs); err != nil {
		t.Fatalf("publish: %v\n%s", err, ch.status())
	}
	leader := rc.leader()
	if leader == "" {
		t.Fatalf("no router says it leads p\n%s", ch.status())
	}
	for n, f := range filters {
		want := expected(f, evs)
		r := readers[n]
		if err := r.until(ctx, func() bool { return len(r.events) >= len(want) }); err != nil {
			t.Fatalf("subscriber at %s: %v (want %d events; CT %v)\n%s", n, err, len(want), r.ct, ch.status())
		}
		if err := sameEvents(r.events, want); err != nil {
			t.Fatalf("subscriber at %s: %v", n, err)
		}
		t.Logf("subscriber at %s: %d events, exactly once (leader %s)", n, len(r.events), leader)
	}
}

// subscribeEverywhere starts one durable subscriber at each router of the
// chain (ids sub-NAME), each with its own filter, closed when the test
// ends; it returns the filters and the subscribers' readers by router.
func (rc *replicaChain) subscribeEverywhere(ctx context.Context, t *testing.T) (map[string]string, map[string]*durableReader) {
	t.Helper()
	ch := rc.durableChain
	filters := map[string]string{"h": `*`, "a": `symbol prefix "S"`, "b": `price < 50`, "c": `*`}
	readers := map[string]*durableReader{}
	for n, f := range filters {
		s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{
			DurableOptions: durableOpts(ch.envs[n], ch.addrs[n]), ID: "sub-" + n, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		readers[n] = newDurableReader(t, s)
	}
	return filters, readers
}
