package router_test

import (
	"context"
	"errors"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// rawConn dials the router with a valid certificate but speaks the wire
// protocol by hand, to send what the client library never would.
func rawConn(t *testing.T, env *local.Env) *quic.Conn {
	t.Helper()
	qc, err := quic.DialAddr(testCtx(t), env.Addr, env.ClientTLS.Clone(), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	return qc
}

// rawHandshake runs Hello/Welcome and Attach, returning both streams.
func rawHandshake(t *testing.T, qc *quic.Conn) (ctrl, data *quic.Stream) {
	t.Helper()
	ctrl, err := qc.OpenStreamSync(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	ctrl.Write(wire.AppendFrame(nil, &wire.Hello{MinVersion: 1, MaxVersion: 1, Role: wire.RoleClient, Name: "raw"}))
	if m, err := wire.NewFrameReader(ctrl, 0).ReadMessage(); err != nil || m.Type() != wire.TypeWelcome {
		t.Fatalf("welcome: %v %v", m, err)
	}
	data, err = qc.OpenStreamSync(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	data.Write(wire.AppendFrame(nil, &wire.Attach{Version: 1}))
	return ctrl, data
}

// closedWith waits for the router to close qc and returns its code.
func closedWith(t *testing.T, qc *quic.Conn) (wire.Code, string) {
	t.Helper()
	select {
	case <-qc.Context().Done():
	case <-testCtx(t).Done():
		t.Fatal("the router did not close the connection")
	}
	var ae *quic.ApplicationError
	if err := context.Cause(qc.Context()); !errors.As(err, &ae) || !ae.Remote {
		t.Fatalf("closed by %v, want an application error from the router", err)
	}
	return wire.Code(ae.ErrorCode), ae.ErrorMessage
}

// TestBadFramesCloseOnlyThatConnection: each bad input closes its own
// connection with the right code; a subscriber connected throughout gets
// every accepted event, and the router keeps serving.
func TestBadFramesCloseOnlyThatConnection(t *testing.T) {
	env := start(t, func(c *router.Config) { c.MaxFrame = 4096 })
	ctx := testCtx(t)
	watcher := dial(t, env, "watcher", client.Options{})
	all, err := watcher.Subscribe(ctx, `*`)
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t, env, "pub", client.Options{})
	evs := stockEvents(5, 600)
	cases := []struct {
		name string
		send func(t *testing.T, qc *quic.Conn)
		code wire.Code
	}{
		{"garbage before hello", func(t *testing.T, qc *quic.Conn) {
			s, _ := qc.OpenStreamSync(ctx)
			s.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
		}, wire.CodeFrameTooLarge},
		{"wrong protocol version", func(t *testing.T, qc *quic.Conn) {
			s, _ := qc.OpenStreamSync(ctx)
			s.Write(wire.AppendFrame(nil, &wire.Hello{MinVersion: 7, MaxVersion: 9, Role: wire.RoleClient}))
		}, wire.CodeVersion},
		{"publish on the control stream", func(t *testing.T, qc *quic.Conn) {
			ctrl, _ := rawHandshake(t, qc)
			ctrl.Write(wire.AppendFrame(nil, &wire.Publish{Seq: 1}))
		}, wire.CodeUnexpected},
		{"unknown message type", func(t *testing.T, qc *quic.Conn) {
			ctrl, _ := rawHandshake(t, qc)
			ctrl.Write([]byte{0, 0, 0, 1, 200})
		}, wire.CodeUnknownType},
		{"oversized frame", func(t *testing.T, qc *quic.Conn) {
			_, data := rawHandshake(t, qc)
			data.Write([]byte{0, 0, 0x20, 0, byte(wire.TypePublish)})
		}, wire.CodeFrameTooLarge},
		{"malformed publish", func(t *testing.T, qc *quic.Conn) {
			_, data := rawHandshake(t, qc)
			data.Write([]byte{0, 0, 0, 5, byte(wire.TypePublish), 1, 1, 1, 1})
		}, wire.CodeMalformed},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := pub.Publish(ctx, evs[i*100:(i+1)*100]...); err != nil {
				t.Fatal(err)
			}
			qc := rawConn(t, env)
			c.send(t, qc)
			if code, msg := closedWith(t, qc); code != c.code {
				t.Fatalf("closed with %v (%s), want %v", code, msg, c.code)
			}
		})
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(collect(t, all, len(evs)), evs); err != nil {
		t.Fatalf("subscriber connected throughout: %v", err)
	}
	assertSubscriptions(t, env.Router, 1)
}

// TestHandshakeRefusedWithoutCertificate: a client that presents no
// certificate, or one from another deployment, never gets a connection.
func TestHandshakeRefusedWithoutCertificate(t *testing.T) {
	env := start(t, nil)
	noCert := env.ClientTLS.Clone()
	noCert.Certificates, noCert.GetClientCertificate = nil, nil
	if _, err := client.Dial(testCtx(t), env.Addr, client.Options{TLS: noCert}); err == nil {
		t.Fatal("a client without a certificate connected")
	}
	other, err := local.Start(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	foreign := env.ClientTLS.Clone()
	foreign.GetClientCertificate = other.ClientTLS.GetClientCertificate
	if _, err := client.Dial(testCtx(t), env.Addr, client.Options{TLS: foreign}); err == nil {
		t.Fatal("a client with another deployment's certificate connected")
	}
	// The router still serves a valid client.
	c := dial(t, env, "ok", client.Options{})
	if _, err := c.Subscribe(testCtx(t), `a exists`); err != nil {
		t.Fatal(err)
	}
}
