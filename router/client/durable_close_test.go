package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/client"
)

// TestDurableCloseDuringRedial: a durable subscription whose first
// connection is lost redials; the router it reaches accepts the resume
// and never starts the session. Close then returns at once (not after
// RetryTimeout) and closes that second connection (left open, its reader
// would block for ever).
func TestDurableCloseDuringRedial(t *testing.T) {
	node, cl := fakeRouterCerts(t)
	ln, err := quic.ListenAddr("127.0.0.1:0", node.ServerConfig(nil), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	second := make(chan *quic.Conn, 1)
	go func() {
		for i := 0; ; i++ {
			qc, resume := acceptResume(ctx, t, ln)
			if qc == nil {
				return
			}
			if i > 0 { // withhold the start
				second <- qc
				return
			}
			ctrl := resume.ctrl
			start := durable.Msg{Kind: durable.MsgStart, Sub: resume.m.Sub, Session: resume.m.Session}
			if _, err := ctrl.Write(wire.AppendFrame(nil, &wire.Durable{Msg: start})); err != nil {
				t.Errorf("fake router: start: %v", err)
				return
			}
			time.Sleep(50 * time.Millisecond)
			qc.CloseWithError(0, "lost") // the subscription redials
		}
	}()
	sub, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{
		DurableOptions: client.DurableOptions{Routers: []string{ln.Addr().String()},
			Options:      client.Options{TLS: cl.ClientConfig(), Name: "c"},
			RetryTimeout: time.Minute, Heartbeat: -1},
		ID: "d1", Filter: "x > 1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if m := <-sub.Messages(); m.Kind != client.DurableStart {
		t.Fatalf("first message %v, want the start", m.Kind)
	}
	var qc *quic.Conn
	select {
	case qc = <-second:
	case <-ctx.Done():
		t.Fatal("the subscription did not redial and resume")
	}
	closed := make(chan error, 1)
	go func() { closed <- sub.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the start of a session being resumed")
	}
	select {
	case <-qc.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection opened by the redial is still open after Close")
	}
}

// resumed is a durable client's resume as a fake router read it.
type resumed struct {
	ctrl *quic.Stream
	m    durable.Msg
}

// acceptResume accepts one durable client on ln: Welcome to its Hello,
// then its first durable message, which must be a resume.
func acceptResume(ctx context.Context, t *testing.T, ln *quic.Listener) (*quic.Conn, resumed) {
	qc, err := ln.Accept(ctx)
	if err != nil {
		return nil, resumed{}
	}
	ctrl, err := qc.AcceptStream(ctx)
	if err != nil {
		return nil, resumed{}
	}
	fr := wire.NewFrameReader(ctrl, wire.HardMaxFrame)
	if _, err := fr.ReadMessage(); err != nil {
		return nil, resumed{}
	}
	if _, err := ctrl.Write(wire.AppendFrame(nil, &wire.Welcome{Version: wire.ClientVersion, Name: "r", MaxFrame: 1 << 20, MaxSubscriptions: 10})); err != nil {
		return nil, resumed{}
	}
	m, err := fr.ReadMessage()
	if err != nil {
		return nil, resumed{}
	}
	d, ok := m.(*wire.Durable)
	if !ok || d.Msg.Kind != durable.MsgResume {
		t.Errorf("fake router: first message %v, want a durable resume", m)
		return nil, resumed{}
	}
	return qc, resumed{ctrl, d.Msg}
}
