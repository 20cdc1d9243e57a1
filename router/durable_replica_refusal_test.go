package router_test

import (
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/durable/replica"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/local"
)

// TestNotLeaderRefusalFields: a router whose replica does not lead p
// refuses a publisher's hello with the not-leader mark and the leader's
// name as fields of the refusal when the client speaks
// wire.VersionLeader, and without them (the reason still says it) to a
// client of version 1, whose decoder would refuse their bits.
func TestNotLeaderRefusalFields(t *testing.T) {
	rc := newReplicaChain(t)
	leader, follower := rc.preferredLeader(t), "b"
	deadline := time.Now().Add(20 * time.Second)
	env := rc.envs[follower]
	var got durable.Msg
	for {
		got = refusalOf(t, env, wire.ClientVersion)
		if got.Leader != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // the follower has not heard from the leader yet
	}
	if !got.NotLeader || got.Leader != leader || got.Publisher != "x" || got.Pubend != "p" || !replica.IsNotLeader(got.Reason) {
		t.Fatalf("refusal at %s (leader %s) to a version %d client: %+v", follower, leader, wire.ClientVersion, got)
	}
	old := refusalOf(t, env, wire.Version)
	if old.NotLeader || old.Leader != "" || !replica.IsNotLeader(old.Reason) {
		t.Fatalf("refusal at %s to a version %d client: %+v", follower, wire.Version, old)
	}
}

// refusalOf says hello to pubend p at env as publisher x over a raw
// connection offering protocol versions 1 to maxVersion, and returns the
// durable answer, which must be a refusal.
func refusalOf(t *testing.T, env *local.Env, maxVersion uint64) durable.Msg {
	t.Helper()
	qc := rawConn(t, env)
	defer qc.CloseWithError(0, "")
	ctrl, err := qc.OpenStreamSync(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	ctrl.Write(wire.AppendFrame(nil, &wire.Hello{MinVersion: wire.Version, MaxVersion: maxVersion, Role: wire.RoleClient, Name: "raw"}))
	fr := wire.NewFrameReader(ctrl, 0)
	m, err := fr.ReadMessage()
	w, ok := m.(*wire.Welcome)
	if err != nil || !ok || w.Version != maxVersion {
		t.Fatalf("welcome: %v %v, want version %d", m, err, maxVersion)
	}
	data, err := qc.OpenStreamSync(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	data.Write(wire.AppendFrame(nil, &wire.Attach{Version: w.Version}))
	ctrl.Write(wire.AppendFrame(nil, &wire.Durable{Msg: durable.Msg{Kind: durable.MsgHello, Pubend: "p", Publisher: "x"}}))
	for {
		m, err := fr.ReadMessage()
		if err != nil {
			t.Fatalf("read the answer to the hello: %v", err)
		}
		if d, ok := m.(*wire.Durable); ok && d.Msg.Kind != durable.MsgHeartbeat {
			if d.Msg.Kind != durable.MsgRefused {
				t.Fatalf("answer %v, want a refusal", d.Msg)
			}
			return d.Msg
		}
	}
}
