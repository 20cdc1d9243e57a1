package router_test

import (
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// TestPublishDictVersions: a client and a router of the PublishDict
// version, and either of them held at the version before, deliver every
// event exactly to the subscribers whose filters match it, in small
// batches (so that events are taken back from full batches and encoded
// again in the next). Where both ends speak the newest version, the
// publisher's frames carry at least a third fewer bytes than the plain
// ones. (The newest version speaks PublishCompact; PublishDict between two
// ends is TestPublishCompactVersions's "old router" and "old client".)
func TestPublishDictVersions(t *testing.T) {
	evs := stockEvents(11, 3000)
	const filter = `symbol == "IBM" && volume >= 100`
	published := publishAcrossVersions(t, evs, filter, wire.VersionLeader)
	if dict, plain := published["both new"], published["old client"]; dict <= 0 || dict > plain*2/3 {
		t.Errorf("client bytes in: %.0f with PublishDict, %.0f plain: want at most two thirds", dict, plain)
	}
}

// publishAcrossVersions publishes evs from a client to a router of the
// newest client version, and with either of them held at old, in small
// batches (events taken back from full batches and encoded again in the
// next): a subscriber of everything gets every event, one of filter
// exactly the matching ones. It returns the client bytes in at the router
// per case: "both new", "old router", "old client".
func publishAcrossVersions(t *testing.T, evs []match.Event, filter string, old uint64) map[string]float64 {
	t.Helper()
	published := map[string]float64{}
	for _, c := range []struct {
		name           string
		router, client uint64
	}{
		{"both new", 0, 0},
		{"old router", old, 0},
		{"old client", 0, old},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := start(t, func(cfg *router.Config) { cfg.ClientVersion = c.router })
			ctx := testCtx(t)
			sub := dial(t, env, "sub", client.Options{})
			all, err := sub.Subscribe(ctx, `*`)
			if err != nil {
				t.Fatal(err)
			}
			some, err := sub.Subscribe(ctx, filter)
			if err != nil {
				t.Fatal(err)
			}
			pub := dial(t, env, "pub", client.Options{ProtocolVersion: c.client, BatchBytes: 1500})
			for i := 0; i < len(evs); i += 250 {
				if err := pub.Publish(ctx, evs[i:i+250]...); err != nil {
					t.Fatal(err)
				}
			}
			if err := pub.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := pub.Accepted(); got != uint64(len(evs)) {
				t.Fatalf("accepted %d of %d events", got, len(evs))
			}
			if err := sameEvents(collect(t, all, len(evs)), evs); err != nil {
				t.Fatalf("all: %v", err)
			}
			want := expected(filter, evs)
			if err := sameEvents(collect(t, some, len(want)), want); err != nil {
				t.Fatalf("%s: %v", filter, err)
			}
			published[c.name] = connBytes(env.Router.Metrics(), clientCN, "in")
		})
	}
	return published
}

// TestPublishDictRefusedBeforeItsVersion: a client of version 1 (a raw
// connection) that sends a PublishDict frame is closed as unexpected; one
// of VersionPublishDict that sends a malformed one is closed as
// malformed; a subscriber connected throughout gets nothing of either.
func TestPublishDictRefusedBeforeItsVersion(t *testing.T) {
	env := start(t, nil)
	ctx := testCtx(t)
	watcher := dial(t, env, "watcher", client.Options{})
	all, err := watcher.Subscribe(ctx, `*`)
	if err != nil {
		t.Fatal(err)
	}
	good := (&wire.PublishDict{Publish: wire.Publish{Seq: 1, Events: stockEvents(3, 2)}}).AppendBody(nil)
	frame := append([]byte{0, 0, 0, byte(len(good) + 1), byte(wire.TypePublishDict)}, good...)
	qc := rawConn(t, env)
	_, data := rawHandshake(t, qc)
	data.Write(frame)
	if code, msg := closedWith(t, qc); code != wire.CodeUnexpected {
		t.Fatalf("publish-dict at version 1: closed with %v (%s), want unexpected", code, msg)
	}

	qc = rawConn(t, env)
	ctrl, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ctrl.Write(wire.AppendFrame(nil, &wire.Hello{MinVersion: 1, MaxVersion: wire.VersionPublishDict, Role: wire.RoleClient, Name: "raw"}))
	if m, err := wire.NewFrameReader(ctrl, 0).ReadMessage(); err != nil || m.(*wire.Welcome).Version != wire.VersionPublishDict {
		t.Fatalf("welcome: %v %v", m, err)
	}
	data, err = qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data.Write(wire.AppendFrame(nil, &wire.Attach{Version: wire.VersionPublishDict}))
	// One event, one attribute naming the dictionary's entry 5 of none.
	data.Write([]byte{0, 0, 0, 7, byte(wire.TypePublishDict), 1, 1, 1, 5, 2, 2})
	if code, msg := closedWith(t, qc); code != wire.CodeMalformed {
		t.Fatalf("malformed publish-dict: closed with %v (%s), want malformed", code, msg)
	}

	checkWatcherGotNothingRefused(t, env, all)
}

// checkWatcherGotNothingRefused publishes one event from a new client and
// checks that it is the first, and only, event watcher all (subscribed to
// everything before the refused frames were sent) gets.
func checkWatcherGotNothingRefused(t *testing.T, env *local.Env, all *client.Subscription) {
	t.Helper()
	ctx := testCtx(t)
	pub := dial(t, env, "pub", client.Options{})
	last := stockEvents(4, 1)
	if err := pub.Publish(ctx, last...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(collect(t, all, 1), last); err != nil {
		t.Fatalf("the watcher got something of the refused frames: %v", err)
	}
}
