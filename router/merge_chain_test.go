package router_test

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// TestChainMerging links a - b - c over QUIC with perfect merging on
// (Config.Merge): c's two touching price bands of IBM reach b and a as
// their one merged filter, each subscriber at c still gets exactly its own
// band's events in order, and unsubscribing one band sends its remaining
// neighbour upstream in place of the merge.
func TestChainMerging(t *testing.T) {
	a, b, c := startChain(t, func(cfg *router.Config) { cfg.Merge = true })

	low, high := `symbol == "IBM" && price < 100`, `symbol == "IBM" && price >= 100 && price < 150`
	cl := dial(t, c, "sub", client.Options{})
	var subs []*client.Subscription
	for _, f := range []string{low, high} {
		s, err := cl.Subscribe(testCtx(t), f)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s) // acknowledged: installed on every router of the chain
	}
	if got, want := forwardedTo(t, b, "a"), canonical([]string{`symbol == "IBM" && price < 150`}); !slices.Equal(got, want) {
		t.Fatalf("b forwards to a %q, want the merge %q", got, want)
	}
	evs := stockEvents(11, 2000)
	pub := dial(t, a, "pub", client.Options{})
	if err := pub.Publish(testCtx(t), evs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{low, high} {
		want := expected(f, evs)
		if len(want) < 10 {
			t.Fatalf("filter %s matched only %d events: weak test", f, len(want))
		}
		if err := sameEvents(collect(t, subs[i], len(want)), want); err != nil {
			t.Fatalf("subscriber %s: %v", f, err)
		}
	}
	if err := cl.Unsubscribe(testCtx(t), subs[1]); err != nil {
		t.Fatal(err)
	}
	// The removal reaches b before a probe subscription made after it.
	if _, err := cl.Subscribe(testCtx(t), `exchange == "none"`); err != nil {
		t.Fatal(err)
	}
	if got, want := forwardedTo(t, b, "a"), canonical([]string{low, `exchange == "none"`}); !slices.Equal(got, want) {
		t.Fatalf("after unsubscribing %s, b forwards to a %q, want %q", high, got, want)
	}
}

// forwardedTo returns the filters env's router forwards to its link to
// peer, from /debug/routes.
func forwardedTo(t *testing.T, env *local.Env, peer string) []string {
	t.Helper()
	_, links := debugRoutes(t, env)
	l, ok := links[peer]
	if !ok {
		t.Fatalf("no link to %s in /debug/routes", peer)
	}
	return l.Forwarded
}
