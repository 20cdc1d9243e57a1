package router_test

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// rtoFilters are nested price limits and bands per symbol, so the routing
// table has several layers and vectors to send.
func rtoFilters() []string {
	var out []string
	for i, sym := range symbols {
		out = append(out, fmt.Sprintf(`symbol == %q`, sym))
		for _, lim := range []int{20, 60, 120, 180} {
			out = append(out, fmt.Sprintf(`symbol == %q && price < %d`, sym, lim+i))
		}
		out = append(out, fmt.Sprintf(`symbol == %q && price >= %d && price <= %d`, sym, 30+i, 90+i))
	}
	return append(out, `price < 50`, `price >= 150`, `volume > 9000`)
}

// TestRTOLyingClientLosesNoEvent: router a places its clients'
// subscriptions with the help of assisting clients, one of which lies
// (random answers and FF claims); a subscriber at a then gets exactly its
// matching events published at b, so every filter reached b although the
// lies placed it. Under verify one liar (or, as a control, one honest
// client) answers everything; under majority one liar and two honest
// clients answer each vector. The assist metrics show the placements and
// the covering tests saved (and no fallback with honest clients alone).
func TestRTOLyingClientLosesNoEvent(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		clients      int
		lie          bool // the first assistant lies
		honest       int  // further honest assistants
	}{{"verify/liar", "verify", 1, true, 0}, {"verify/honest", "verify", 1, false, 0}, {"majority/liar", "majority", 3, true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			m, err := local.StartMesh(ctx, t.TempDir(), []string{"a", "b"}, []local.Edge{{A: 0, B: 1}}, func(i int, cfg *router.Config) {
				if i == 0 {
					cfg.Assist = router.AssistConfig{RTO: tc.policy, Clients: tc.clients, VectorSize: 4,
						Fixed: []string{`symbol == "IBM"`, `symbol == "SAP"`, `price < 100`}}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Stop() })
			a, b := m.Routers[0], m.Routers[1]
			liar := dial(t, a, "first", client.Options{Assist: &client.Assist{RTO: true, FF: true, Lie: tc.lie, LieSeed: 7}})
			assistants := []*client.Client{liar}
			for i := range tc.honest {
				assistants = append(assistants, dial(t, a, fmt.Sprintf("honest%d", i), client.Options{Assist: &client.Assist{RTO: true}}))
			}
			for _, c := range assistants { // the offer precedes this on the control stream
				if _, err := c.Subscribe(ctx, `never == 1`); err != nil {
					t.Fatal(err)
				}
			}
			// The liar also subscribes through FF with lying claims.
			subs := map[*client.Subscription]string{}
			for i, f := range rtoFilters() {
				who := liar
				if i%3 != 0 {
					who = dial(t, a, fmt.Sprintf("sub%d", i), client.Options{})
				}
				s, err := who.Subscribe(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				subs[s] = f
			}
			evs := stockEvents(11, 600)
			pub := dial(t, b, "pub", client.Options{})
			if err := pub.Publish(ctx, evs...); err != nil {
				t.Fatal(err)
			}
			if err := pub.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			for s, f := range subs {
				want := expected(f, evs)
				if err := sameEvents(collect(t, s, len(want)), want); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
			}
			am := a.Router.Metrics().Assist
			placed := metricValue(am.Placements.WithLabelValues("rto", "placed")) + metricValue(am.Placements.WithLabelValues("rto", "fallback"))
			ff := metricValue(am.Placements.WithLabelValues("ff", "placed")) + metricValue(am.Placements.WithLabelValues("ff", "fallback"))
			saved := metricValue(am.Tests.WithLabelValues("saved"))
			t.Logf("rto placements %v (fallback %v), ff %v, tests done %v, saved %v, local %v", placed,
				metricValue(am.Placements.WithLabelValues("rto", "fallback")), ff,
				metricValue(am.Tests.WithLabelValues("done")), saved, metricValue(am.Tests.WithLabelValues("local")))
			if placed == 0 || ff == 0 || saved == 0 {
				t.Fatalf("assistance unused: %v RTO and %v FF placements, %v tests saved", placed, ff, saved)
			}
			if fb := metricValue(am.Placements.WithLabelValues("rto", "fallback")); !tc.lie && fb != 0 {
				t.Fatalf("%v fallbacks with honest assistants", fb)
			}
		})
	}
}
