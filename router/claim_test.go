package router_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// claimFilters are rtoFilters with each symbol's filters given twice more
// under other bounds, so that a client's own filters cover one another
// often (what claims are for), each with the bound volume >= k: client k's
// filters are its own (a filter another client holds already would join
// its node, the claim unused).
func claimFilters(k int) []string {
	out := rtoFilters()
	for i, sym := range symbols {
		for _, lim := range []int{40, 100} {
			out = append(out, fmt.Sprintf(`symbol == %q && price < %d && volume > %d`, sym, lim+i, 1000*i))
		}
	}
	for i := range out {
		out[i] += fmt.Sprintf(` && volume >= %d`, k)
	}
	return out
}

// TestClaimLyingClientLosesNoEvent: at router a (the default shallow
// routing table), one client subscribes with honest placement claims and
// another with lying ones (random earlier subscriptions as parents), each
// both one filter at a time and in a batch; events published at b reach
// every subscription exactly as brute-force matching says (so every
// filter a placed by a claim is still forwarded to b or covered by what
// is). The claim metrics show claims placed, and refused only for the
// liar.
func TestClaimLyingClientLosesNoEvent(t *testing.T) {
	ctx := testCtx(t)
	m, err := local.StartMesh(ctx, t.TempDir(), []string{"a", "b"}, []local.Edge{{A: 0, B: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	a, b := m.Routers[0], m.Routers[1]
	type batchGot struct {
		sync.Mutex
		filters []string
		events  [][]match.Event
	}
	singles := map[*client.Subscription]string{}
	var batches []*batchGot
	for k, lie := range []bool{false, true} {
		name := map[bool]string{false: "honest", true: "liar"}[lie]
		single := dial(t, a, name, client.Options{Assist: &client.Assist{Claim: true, Lie: lie, LieSeed: 3}})
		for _, f := range claimFilters(2 * k) {
			s, err := single.Subscribe(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			singles[s] = f
		}
		batched := dial(t, a, name+"-batch", client.Options{Assist: &client.Assist{Claim: true, Lie: lie, LieSeed: 5}})
		filters := claimFilters(2*k + 1)
		got := &batchGot{filters: filters, events: make([][]match.Event, len(filters))}
		batches = append(batches, got)
		if _, err := batched.SubscribeBatch(ctx, filters, func(subs []int, e match.Event) {
			got.Lock()
			defer got.Unlock()
			for _, i := range subs {
				got.events[i] = append(got.events[i], e)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	am := a.Router.Metrics().Assist
	placed := metricValue(am.Placements.WithLabelValues("claim", "placed"))
	refused := metricValue(am.Placements.WithLabelValues("claim", "fallback"))
	t.Logf("claims placed %v, refused %v; covering tests done %v", placed, refused, metricValue(am.Tests.WithLabelValues("done")))
	if n := len(claimFilters(0)); placed < float64(n) || refused < float64(n) {
		t.Fatalf("claims unused: %v placed, %v refused (want at least %d of each)", placed, refused, n)
	}

	evs := stockEvents(13, 800)
	pub := dial(t, b, "pub", client.Options{})
	if err := pub.Publish(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for s, f := range singles {
		want := expected(f, evs)
		if err := sameEvents(collect(t, s, len(want)), want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for k, got := range batches {
		for i, f := range got.filters {
			want := expected(f, evs)
			for {
				got.Lock()
				have := slices.Clone(got.events[i])
				got.Unlock()
				if len(have) >= len(want) || time.Now().After(deadline) {
					if err := sameEvents(have, want); err != nil {
						t.Fatalf("batch %d, %s: %v", k, f, err)
					}
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}
