package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// TestDialRefusesVersionNotOffered: a router whose Welcome names a
// protocol version outside the range the client's Hello offered (a
// hostile or broken router) is refused at Dial with CodeVersion, instead
// of the client attaching at a version it does not speak.
func TestDialRefusesVersionNotOffered(t *testing.T) {
	node, cl := fakeRouterCerts(t)
	for _, v := range []uint64{0, wire.ClientVersion + 1, 1 << 40} {
		ln, err := quic.ListenAddr("127.0.0.1:0", node.ServerConfig(nil), &quic.Config{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		go welcomeWith(ctx, ln, v)
		_, err = client.Dial(ctx, ln.Addr().String(), client.Options{TLS: cl.ClientConfig(), Name: "c"})
		cancel()
		ln.Close()
		var we *wire.ProtocolError
		if !errors.As(err, &we) || we.Code != wire.CodeVersion {
			t.Errorf("welcome at version %d: Dial returned %v, want a CodeVersion error", v, err)
		}
	}
}

// welcomeWith accepts one client on ln and answers its Hello with a
// Welcome at version v, whatever the Hello offered.
func welcomeWith(ctx context.Context, ln *quic.Listener, v uint64) {
	qc, err := ln.Accept(ctx)
	if err != nil {
		return
	}
	defer qc.CloseWithError(0, "")
	ctrl, err := qc.AcceptStream(ctx)
	if err != nil {
		return
	}
	if _, err := wire.NewFrameReader(ctrl, wire.HardMaxFrame).ReadMessage(); err != nil {
		return
	}
	if _, err := ctrl.Write(wire.AppendFrame(nil, &wire.Welcome{Version: v, Name: "r", MaxFrame: 1 << 20, MaxSubscriptions: 10})); err != nil {
		return
	}
	<-ctx.Done()
}

// fakeRouterCerts makes a deployment's certificates for a test's fake
// router (node) and its client.
func fakeRouterCerts(t *testing.T) (node, cl *certs.Loaded) {
	t.Helper()
	dir := t.TempDir()
	if err := certs.Init(dir, nil); err != nil {
		t.Fatal(err)
	}
	node, err := certs.Load(dir, certs.Node)
	if err != nil {
		t.Fatal(err)
	}
	cl, err = certs.Load(dir, certs.Client)
	if err != nil {
		t.Fatal(err)
	}
	return node, cl
}
