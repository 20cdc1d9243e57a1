package router_test

import (
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/client"
)

// TestPublishCompactVersions: a client and a router of the
// PublishCompact version, and either of them held at the version before
// (PublishDict), deliver every event exactly to the subscribers whose
// filters match it, in small batches (events taken back from full
// batches and encoded again in the next, with both dictionaries). Where
// both ends speak PublishCompact, the publisher's frames carry at most
// two thirds of PublishDict's bytes (the symbols and exchanges repeat,
// the prices are cents).
func TestPublishCompactVersions(t *testing.T) {
	evs := stockEvents(12, 3000)
	const filter = `symbol == "IBM" && volume >= 100 && price < 150`
	published := publishAcrossVersions(t, evs, filter, wire.VersionClaim)
	if compact, dict := published["both new"], published["old client"]; compact <= 0 || compact > dict*2/3 {
		t.Errorf("client bytes in: %.0f with PublishCompact, %.0f with PublishDict: want at most two thirds", compact, dict)
	}
	t.Logf("client bytes in: %.0f with PublishCompact, %.0f and %.0f with PublishDict (old router, old client)",
		published["both new"], published["old router"], published["old client"])
}

// TestPublishCompactRefusedBeforeItsVersion: a client of VersionClaim
// that sends a PublishCompact frame is closed as unexpected; one of
// VersionCompact that sends a malformed one is closed as malformed; a
// subscriber connected throughout gets nothing of either.
func TestPublishCompactRefusedBeforeItsVersion(t *testing.T) {
	env := start(t, nil)
	ctx := testCtx(t)
	watcher := dial(t, env, "watcher", client.Options{})
	all, err := watcher.Subscribe(ctx, `*`)
	if err != nil {
		t.Fatal(err)
	}
	good := (&wire.PublishCompact{Publish: wire.Publish{Seq: 1, Events: stockEvents(3, 2)}}).AppendBody(nil)
	for _, c := range []struct {
		version uint64
		body    []byte
		code    wire.Code
	}{
		{wire.VersionClaim, good, wire.CodeUnexpected},
		// One event, one attribute "a": a string reference to no value.
		{wire.VersionCompact, []byte{1, 1, 1, 0, 1, 'a', 5, 1}, wire.CodeMalformed},
	} {
		qc := rawConn(t, env)
		ctrl, err := qc.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ctrl.Write(wire.AppendFrame(nil, &wire.Hello{MinVersion: 1, MaxVersion: c.version, Role: wire.RoleClient, Name: "raw"}))
		if m, err := wire.NewFrameReader(ctrl, 0).ReadMessage(); err != nil || m.(*wire.Welcome).Version != c.version {
			t.Fatalf("welcome: %v %v", m, err)
		}
		data, err := qc.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		data.Write(wire.AppendFrame(nil, &wire.Attach{Version: c.version}))
		data.Write(append([]byte{0, 0, byte((len(c.body) + 1) >> 8), byte(len(c.body) + 1), byte(wire.TypePublishCompact)}, c.body...))
		if code, msg := closedWith(t, qc); code != c.code {
			t.Fatalf("publish-compact at version %d: closed with %v (%s), want %v", c.version, code, msg, c.code)
		}
	}

	checkWatcherGotNothingRefused(t, env, all)
}
