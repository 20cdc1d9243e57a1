package router_test

import (
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// TestPlaceClaimRefusedBeforeItsVersion: a client of version
// VersionClaim-1 (a raw connection) that sends a place-claim, then the
// Subscribe it would belong to, is closed as unexpected; the router
// counts no claim, placed or refused, and the Subscribe after the claim
// is never installed (an event it matches reaches only a watcher). A
// version 4 client then claims as usual; events are published at the
// router's neighbour, so what a reaches them through is its forwarding.
func TestPlaceClaimRefusedBeforeItsVersion(t *testing.T) {
	ctx := testCtx(t)
	m, err := local.StartMesh(ctx, t.TempDir(), []string{"a", "b"}, []local.Edge{{A: 0, B: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	env, far := m.Routers[0], m.Routers[1] // claims need a mesh: a lone router places nothing
	watcher := dial(t, env, "watcher", client.Options{})
	all, err := watcher.Subscribe(ctx, `*`)
	if err != nil {
		t.Fatal(err)
	}
	qc := rawConn(t, env)
	ctrl, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old := wire.VersionClaim - 1
	ctrl.Write(wire.AppendFrame(nil, &wire.Hello{MinVersion: 1, MaxVersion: old, Role: wire.RoleClient, Name: "raw"}))
	if m, err := wire.NewFrameReader(ctrl, 0).ReadMessage(); err != nil || m.(*wire.Welcome).Version != old {
		t.Fatalf("welcome: %v %v", m, err)
	}
	data, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data.Write(wire.AppendFrame(nil, &wire.Attach{Version: old}))
	var frames []byte
	frames = wire.AppendFrame(frames, &wire.Subscribe{ID: 1, Filter: `symbol == "IBM"`})
	frames = wire.AppendFrame(frames, &wire.PlaceClaim{First: 2, Parents: []uint64{1}})
	frames = wire.AppendFrame(frames, &wire.Subscribe{ID: 2, Filter: `symbol == "IBM" && price < 10`})
	ctrl.Write(frames)
	if code, msg := closedWith(t, qc); code != wire.CodeUnexpected {
		t.Fatalf("place-claim at version %d: closed with %v (%s), want unexpected", old, code, msg)
	}
	am := env.Router.Metrics().Assist
	placed := func() (float64, float64) {
		return metricValue(am.Placements.WithLabelValues("claim", "placed")),
			metricValue(am.Placements.WithLabelValues("claim", "fallback"))
	}
	if p, f := placed(); p != 0 || f != 0 {
		t.Fatalf("after a refused place-claim: %v claims placed, %v refused, want none", p, f)
	}

	honest := dial(t, env, "honest", client.Options{Assist: &client.Assist{Claim: true}})
	filters := []string{`symbol == "IBM"`, `symbol == "IBM" && price < 10`}
	var subs []*client.Subscription
	for _, f := range filters {
		s, err := honest.Subscribe(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p, _ := placed(); p < 1 && time.Now().Before(deadline); p, _ = placed() {
		time.Sleep(10 * time.Millisecond) // the matching loop counts it after the core's Ack
	}
	if p, _ := placed(); p != 1 {
		t.Fatalf("a version %d client's honest claim: %v placed, want 1", wire.VersionClaim, p)
	}
	pub := dial(t, far, "pub", client.Options{})
	evs := stockEvents(4, 200)
	if err := pub.Publish(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(collect(t, all, len(evs)), evs); err != nil {
		t.Fatalf("watcher: %v", err)
	}
	for i, f := range filters {
		want := expected(f, evs)
		if err := sameEvents(collect(t, subs[i], len(want)), want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
