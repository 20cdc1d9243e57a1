package router_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// rawBloomLink dials env as router "x" of link versions 1 to maxVersion
// in Bloom mode, speaking the link protocol by hand: hello, the data
// stream's attach, the router's answer. It returns the connection, the data
// stream and the version the router announced.
func rawBloomLink(t *testing.T, addr, certDir string, maxVersion uint64) (*quic.Conn, *quic.Stream, uint64) {
	t.Helper()
	node, err := certs.Load(certDir, certs.Node)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	qc, err := quic.DialAddr(ctx, addr, node.ClientConfig(), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	ctrl, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hello := &wire.LinkHello{MinVersion: wire.Version, MaxVersion: maxVersion, Name: "x", Reach: []string{"x"},
		Bloom: bloomfwd.WireParams(bloom.Params{}), Incarnation: 7 + maxVersion} // a new incarnation per version: a restart
	if _, err := ctrl.Write(wire.AppendFrame(nil, hello)); err != nil {
		t.Fatal(err)
	}
	data, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := data.Write(wire.AppendFrame(nil, &wire.Attach{Version: wire.Version})); err != nil {
		t.Fatal(err)
	}
	m, err := wire.NewFrameReader(ctrl, 0).ReadMessage()
	if err != nil {
		t.Fatalf("the router's answer: %v", err)
	}
	answer, ok := m.(*wire.LinkHello)
	if !ok {
		t.Fatalf("the router answered %s, want link-hello", m.Type())
	}
	return qc, data, answer.MaxVersion
}

// TestBloomWitnessOnLinks: a Bloom router announces link versions 1 to 2;
// a peer that agreed on version 2 may send entries with witnesses (the
// router's subscriber gets the event), a peer of version 1 may not: the
// router closes that link as unexpected, naming the witness, delivers
// nothing of the batch, and goes on serving.
func TestBloomWitnessOnLinks(t *testing.T) {
	certDir := deploymentCerts(t)
	w := newLinkWatch()
	env := startAt(t, t.TempDir(), certDir, func(c *router.Config) {
		linkedRouter(t, "r", certDir, "", w)(c)
		c.Forward = router.ForwardBloom
	})
	defer env.Stop()
	ctx := testCtx(t)
	sub, err := dial(t, env, "sub", client.Options{}).Subscribe(ctx, `seq >= 0`)
	if err != nil {
		t.Fatal(err)
	}
	event := func(seq int64) match.Event {
		return match.MustEvent(match.Attr{Name: "seq", Value: match.Int(seq)}, match.Attr{Name: "symbol", Value: match.Str("IBM")})
	}
	batch := func(seq int64, witness uint64) []byte {
		var b wire.BloomBatch
		summary := make([]uint64, 16)
		summary[0] = 0xff
		b.AddEntry(wire.AppendBloomEvent(nil, false, summary, wire.AppendEvent(nil, event(seq))), witness)
		return b.AppendFrame(nil, 1)
	}

	// Version 1: the witness is refused.
	qc, data, announced := rawBloomLink(t, env.Addr, certDir, 1)
	if announced != wire.LinkVersion {
		t.Fatalf("the router announced link versions up to %d, want %d", announced, wire.LinkVersion)
	}
	w.waitUp(t)
	if _, err := data.Write(batch(1, 0x42)); err != nil {
		t.Fatal(err)
	}
	if code, msg := closedWith(t, qc); code != wire.CodeUnexpected || !strings.Contains(msg, "witness") {
		t.Fatalf("closed with %v (%s), want unexpected, naming the witness", code, msg)
	}

	// Version 2: entries with and without a witness are taken.
	qc, data, _ = rawBloomLink(t, env.Addr, certDir, wire.LinkVersion)
	w.waitUp(t)
	for seq, witness := range []uint64{0x42, 0} {
		if _, err := data.Write(batch(int64(2+seq), witness)); err != nil {
			t.Fatal(err)
		}
	}
	got := collect(t, sub, 2)
	if err := sameEvents(got, []match.Event{event(2), event(3)}); err != nil {
		t.Fatalf("the subscriber got %v: %v (event 1 came on the refused link)", got, err)
	}
	select {
	case <-qc.Context().Done():
		t.Fatalf("the version-2 link was closed: %v", context.Cause(qc.Context()))
	default:
	}
}
