package router_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// TestAdvertChain links a - b - c over QUIC with advertisements on.
// Subscriptions at c stay at c while nobody advertises (checked in every
// router's Routes); once a publisher at a has advertised symbol == "IBM",
// the overlapping subscription is installed at b and a (and the one that
// does not overlap is not) by the time Advertise returns, and the IBM
// events published at a reach c exactly. Once the publisher withdraws its
// advertisement, its event is refused: the batch is dropped, the
// publisher's connection closed with an error naming it, and the refusal
// counted.
func TestAdvertChain(t *testing.T) {
	a, b, c := startAdvertChain(t)
	ibm, sap := `symbol == "IBM" && price > 50`, `symbol == "SAP"`
	sub := dial(t, c, "sub", client.Options{})
	subIBM, err := sub.Subscribe(testCtx(t), ibm)
	if err != nil {
		t.Fatal(err)
	}
	subscribe(t, sub, sap)
	checkLink(t, a, "b", nil, nil) // nobody advertised: nothing left c
	checkLinks(t, b, map[string][2][]string{"a": {nil, nil}, "c": {nil, nil}})
	checkLink(t, c, "b", nil, nil)

	pub := dial(t, a, "pub", client.Options{})
	adv, err := pub.Advertise(testCtx(t), `symbol == "IBM"`)
	if err != nil {
		t.Fatal(err)
	}
	// Advertise returned: the IBM subscription is installed along the path.
	checkLink(t, c, "b", []string{ibm}, nil)
	checkLinks(t, b, map[string][2][]string{"a": {{ibm}, nil}, "c": {nil, {ibm}}})
	checkLink(t, a, "b", nil, []string{ibm})

	evs := publishConforming(t, pub, 11, `symbol == "IBM"`)
	want := expected(ibm, evs)
	if len(want) < 10 {
		t.Fatalf("only %d events match %s: weak test", len(want), ibm)
	}
	if err := sameEvents(collect(t, subIBM, len(want)), want); err != nil {
		t.Fatalf("subscriber at c (%s): %v", ibm, err)
	}

	// Once the advertisement is withdrawn, even an IBM event is refused.
	if err := pub.Unadvertise(testCtx(t), adv); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(testCtx(t), evs[0]); err != nil {
		t.Fatal(err)
	}
	err = pub.Flush(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "matches none of this connection's advertisements") {
		t.Fatalf("a non-conforming event was accepted (Flush: %v)", err)
	}
	if got := counterValue(t, a, "sift_router_advert_refused_events_total"); got != 1 {
		t.Fatalf("refused events counter %v, want 1", got)
	}
}

// startAdvertChain starts routers a - b - c with advertisements on (c
// dials b, b dials a), each configured further by mods, and waits for both
// links.
func startAdvertChain(t *testing.T, mods ...func(*router.Config)) (a, b, c *local.Env) {
	t.Helper()
	return startChain(t, func(c *router.Config) {
		c.Advertise = true
		for _, m := range mods {
			m(c)
		}
	})
}

// checkLinks asserts a router's links, by peer: the filters forwarded and
// received (in any spelling).
func checkLinks(t *testing.T, env *local.Env, want map[string][2][]string) {
	t.Helper()
	routes, err := env.Router.Routes(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != len(want) {
		t.Fatalf("%s: links %+v, want %d", env.Router.Name(), routes, len(want))
	}
	for _, got := range routes {
		w, ok := want[got.Peer]
		if !ok {
			t.Fatalf("%s: unexpected link to %s", env.Router.Name(), got.Peer)
		}
		if !slices.Equal(got.Forwarded, canonical(w[0])) || !slices.Equal(got.Received, canonical(w[1])) {
			t.Fatalf("%s: link to %s forwards %q and holds %q, want %q and %q", env.Router.Name(), got.Peer, got.Forwarded, got.Received, canonical(w[0]), canonical(w[1]))
		}
	}
}

// counterValue reads a counter (without labels) from a router's registry.
func counterValue(t *testing.T, env *local.Env, name string) float64 {
	t.Helper()
	mfs, err := env.Router.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("%s: no counter %s", env.Router.Name(), name)
	return 0
}

// TestAdvertiseOff: a router without advertisements acknowledges Advertise
// and Unadvertise at once and takes any event (every subscription reaches
// it anyway).
func TestAdvertiseOff(t *testing.T) {
	env := start(t, nil)
	sub, err := dial(t, env, "sub", client.Options{}).Subscribe(testCtx(t), `x > 1`)
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t, env, "pub", client.Options{})
	adv, err := pub.Advertise(testCtx(t), `x > 5`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Advertise(testCtx(t), `x >`); err == nil || wire.CodeOf(errors.Unwrap(err)) != wire.CodeBadFilter {
		t.Fatalf("a malformed advertisement: %v, want CodeBadFilter", err)
	}
	if err := pub.Unadvertise(testCtx(t), adv); err != nil {
		t.Fatal(err)
	}
	e := match.MustEvent(match.Attr{Name: "x", Value: match.Int(3)}) // outside the withdrawn x > 5
	if err := pub.Publish(testCtx(t), e); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(collect(t, sub, 1), []match.Event{e}); err != nil {
		t.Fatal(err)
	}
}

// TestAdvertBloomChain is the chain a - b - c with advertisements and
// Bloom forwarding (--forward bloom --advertise). b's own `price > 40`
// covers c's IBM filter, so once a advertises symbol == "IBM" only b's
// filter reaches a: a learns the IBM filter's constraints from the
// dictionary flood alone (the false-negative trap of docs/protocol.md,
// "Bloom forwarding", now under advertisements). The IBM events published
// at a reach b and c exactly; the SAP subscription never leaves c.
func TestAdvertBloomChain(t *testing.T) {
	a, b, c := startAdvertChain(t, func(c *router.Config) { c.Forward = router.ForwardBloom })
	ibm, sap, wide := `symbol == "IBM" && price > 50`, `symbol == "SAP"`, `price > 40`
	subC := dial(t, c, "sub-c", client.Options{})
	subIBM, err := subC.Subscribe(testCtx(t), ibm)
	if err != nil {
		t.Fatal(err)
	}
	subscribe(t, subC, sap)
	subWide, err := dial(t, b, "sub-b", client.Options{}).Subscribe(testCtx(t), wide)
	if err != nil {
		t.Fatal(err)
	}
	checkLink(t, a, "b", nil, nil) // nobody advertised: nothing reached a
	checkLink(t, c, "b", nil, nil)

	pub := dial(t, a, "pub", client.Options{})
	if _, err := pub.Advertise(testCtx(t), `symbol == "IBM"`); err != nil {
		t.Fatal(err)
	}
	checkLink(t, c, "b", []string{ibm}, nil)
	checkLinks(t, b, map[string][2][]string{"a": {{wide}, nil}, "c": {nil, {ibm}}})
	checkLink(t, a, "b", nil, []string{wide})

	evs := publishConforming(t, pub, 12, `symbol == "IBM"`)
	for _, w := range []struct {
		where, filter string
		sub           *client.Subscription
	}{{"c", ibm, subIBM}, {"b", wide, subWide}} {
		want := expected(w.filter, evs)
		if len(want) < 10 {
			t.Fatalf("only %d events match %s: weak test", len(want), w.filter)
		}
		if err := sameEvents(collect(t, w.sub, len(want)), want); err != nil {
			t.Fatalf("subscriber at %s (%s): %v", w.where, w.filter, err)
		}
	}
	// a matches exactly (b's price filter) and summarizes what it sends.
	if n, want := metricValue(a.Router.Metrics().Bloom.Summaries), len(expected(wide, evs)); n != float64(want) {
		t.Fatalf("a computed %v summaries for the %d events it forwards: not Bloom forwarding", n, want)
	}
}

// TestAdvertDurable: durable delivery needs no advertisement. A durable
// subscription travels to the pubend's router by the durable protocol's
// own installs (MsgInstall, hop by hop), not by the mesh's subscription
// propagation that advertisements restrict, and a durable publisher's
// events enter its pubend, not the plain publish path that refuses
// events outside advertisements. So with --advertise on every router and
// nobody advertising, the durable subscriber at c gets exactly its events
// from pubend a, while a plain subscription at c stays at c.
func TestAdvertDurable(t *testing.T) {
	a, b, c := startAdvertChain(t, durableOn(map[string]string{"a": "a"}, "a", "b", "c"))
	subscribe(t, dial(t, c, "plain", client.Options{}), `symbol == "SAP"`)
	ctx := testCtx(t)
	f := `symbol prefix "S"`
	s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{DurableOptions: durableOpts(c), ID: "sub-c", Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := newDurableReader(t, s)
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{DurableOptions: durableOpts(a), Pubend: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	evs := stockEvents(13, 600)
	for _, e := range evs {
		if _, err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := expected(f, evs)
	if len(want) < 10 {
		t.Fatalf("only %d events match %s: weak test", len(want), f)
	}
	if err := r.until(ctx, func() bool { return len(r.events) >= len(want) }); err != nil {
		t.Fatalf("durable subscriber at c: %v (want %d events)", err, len(want))
	}
	if err := sameEvents(r.events, want); err != nil {
		t.Fatalf("durable subscriber at c: %v", err)
	}
	checkLink(t, a, "b", nil, nil) // the plain subscription stayed at c
	checkLinks(t, b, map[string][2][]string{"a": {nil, nil}, "c": {nil, nil}})
}

// TestUnadvertiseAfterPublish: events published before Unadvertise are
// routed under the advertisement, even when they are still in the
// client's batch (Publish buffers until the batch fills or Flush):
// Unadvertise sends them first and waits for the router to take them,
// so the router does not refuse them, closing the connection.
func TestUnadvertiseAfterPublish(t *testing.T) {
	a, _, c := startAdvertChain(t)
	sub, err := dial(t, c, "sub", client.Options{}).Subscribe(testCtx(t), `x > 0`)
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t, a, "pub", client.Options{})
	adv, err := pub.Advertise(testCtx(t), `x > 0`)
	if err != nil {
		t.Fatal(err)
	}
	e := match.MustEvent(match.Attr{Name: "x", Value: match.Int(3)})
	if err := pub.Publish(testCtx(t), e); err != nil {
		t.Fatal(err)
	}
	if err := pub.Unadvertise(testCtx(t), adv); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(testCtx(t)); err != nil {
		t.Fatalf("an event published before Unadvertise was refused: %v", err)
	}
	if err := sameEvents(collect(t, sub, 1), []match.Event{e}); err != nil {
		t.Fatal(err)
	}
}

// publishConforming publishes, and flushes, the events of stockEvents(seed,
// 3000) that match advertised (so that an advertising publisher may send
// them), and returns them.
func publishConforming(t *testing.T, pub *client.Client, seed uint64, advertised string) []match.Event {
	t.Helper()
	f := match.MustParse(advertised)
	var evs []match.Event
	for _, e := range stockEvents(seed, 3000) {
		if f.Matches(e) {
			evs = append(evs, e)
		}
	}
	if err := pub.Publish(testCtx(t), evs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return evs
}
