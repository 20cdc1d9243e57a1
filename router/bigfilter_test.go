package router_test

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/router/client"
)

// TestOversizedFilterRefusedAlone: a filter over MaxFilterLen is refused
// like any bad filter, by the client library without sending it and by
// the router when a raw client sends it, and the connection and its
// other subscriptions stay.
func TestOversizedFilterRefusedAlone(t *testing.T) {
	env := start(t, nil)
	big := "s == \"" + strings.Repeat("x", client.MaxFilterLen) + "\""
	c := dial(t, env, "c", client.Options{})
	kept, err := c.Subscribe(testCtx(t), `a exists`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribe(testCtx(t), big); !client.IsCode(err, client.CodeBadFilter) || !strings.Contains(err.Error(), "exceeds the limit") {
		t.Fatalf("oversized filter: %v, want CodeBadFilter", err)
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}

	qc := rawConn(t, env)
	ctrl, _ := rawHandshake(t, qc)
	ctrl.Write(wire.AppendFrame(nil, &wire.Subscribe{ID: 1, Filter: big}))
	ctrl.Write(wire.AppendFrame(nil, &wire.Subscribe{ID: 2, Filter: `a exists`}))
	fr := wire.NewFrameReader(ctrl, 0)
	for _, want := range []string{"error 1", "ack 2"} {
		m, err := fr.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %s: %v", want, err)
		}
		switch m := m.(type) {
		case *wire.Error:
			if want != "error 1" || m.Ref != 1 || m.Code != wire.CodeBadFilter {
				t.Fatalf("got %v, want %s", m, want)
			}
		case *wire.Ack:
			if want != "ack 2" || m.ID != 2 {
				t.Fatalf("got ack %d, want %s", m.ID, want)
			}
		default:
			t.Fatalf("got %s, want %s", m.Type(), want)
		}
	}
	if qc.Context().Err() != nil {
		t.Fatal("the raw connection was closed")
	}
	assertSubscriptions(t, env.Router, 2)
	_ = kept
}
