package router_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/perm"
)

// TestLingerSendsPartialBatch: a publisher that never calls Flush still
// has its last partial batch delivered (Options.Linger), and with Linger
// negative it is not sent until Flush.
func TestLingerSendsPartialBatch(t *testing.T) {
	env := start(t, nil)
	sub := dial(t, env, "sub", client.Options{})
	s, err := sub.Subscribe(testCtx(t), `n exists`)
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t, env, "pub", client.Options{})
	if err := pub.Publish(testCtx(t), match.MustEvent(match.Attr{Name: "n", Value: match.Int(1)})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	if _, err := s.Next(ctx); err != nil {
		t.Fatalf("an unflushed event never arrived: %v", err)
	}
	held := dial(t, env, "held", client.Options{Linger: -1})
	if err := held.Publish(testCtx(t), match.MustEvent(match.Attr{Name: "n", Value: match.Int(2)})); err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel2()
	if e, err := s.Next(short); err == nil {
		t.Fatalf("with Linger -1 the partial batch was sent without Flush: %v", e)
	}
	if err := held.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx); err != nil {
		t.Fatalf("after Flush: %v", err)
	}
	if held.Accepted() != 1 || pub.Accepted() != 1 {
		t.Fatalf("Accepted %d and %d, want 1 each", held.Accepted(), pub.Accepted())
	}
}

// TestForbiddenIsExported: a permission refusal is a client.ProtocolError
// with client.CodeForbidden, usable with errors.As and client.IsCode.
func TestForbiddenIsExported(t *testing.T) {
	tab, err := perm.Parse([]byte(`{"sift-client": {"subscribe": "a == 1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	env := start(t, func(c *router.Config) { c.Permissions = tab })
	c := dial(t, env, "c", client.Options{})
	if _, err := c.Subscribe(testCtx(t), `a == 1`); err != nil {
		t.Fatal(err)
	}
	_, err = c.Subscribe(testCtx(t), `a exists`)
	var pe *client.ProtocolError
	if !errors.As(err, &pe) || pe.Code != client.CodeForbidden || !client.IsCode(err, client.CodeForbidden) || client.IsCode(err, client.CodeInternal) {
		t.Fatalf("refusal %v (%T), want a client.ProtocolError with CodeForbidden", err, err)
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
}

// TestDrain: Drain delivers everything published (no Flush needed) and
// then closes the connection.
func TestDrain(t *testing.T) {
	env := start(t, nil)
	sub := dial(t, env, "sub", client.Options{})
	s, err := sub.Subscribe(testCtx(t), `n exists`)
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t, env, "pub", client.Options{Linger: -1})
	evs := stockEvents(3, 1000)
	for i := range evs {
		evs[i] = withAttr(evs[i], "n", match.Int(int64(i)))
	}
	if err := pub.Publish(testCtx(t), evs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Drain(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if pub.Accepted() != 1000 || !errors.Is(pub.Err(), client.ErrClosed) {
		t.Fatalf("after Drain: accepted %d, err %v", pub.Accepted(), pub.Err())
	}
	if got := collect(t, s, 1000); len(got) != 1000 {
		t.Fatalf("got %d of 1000", len(got))
	}
}

// TestAdvertisePermission: in advertise mode, an advertisement outside
// the client's publish filter is refused alone (CodeForbidden), one
// within it is acknowledged, and the connection stays.
func TestAdvertisePermission(t *testing.T) {
	tab, err := perm.Parse([]byte(`{"sift-client": {"publish": "tenant == \"a\"", "subscribe": "*"}}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := startAdvertChain(t, func(c *router.Config) { c.Permissions = tab })
	c := dial(t, a, "pub", client.Options{})
	if _, err := c.Advertise(testCtx(t), `tenant == "b"`); !client.IsCode(err, client.CodeForbidden) || !strings.Contains(err.Error(), "may advertise only within") {
		t.Fatalf("advertise outside: %v, want CodeForbidden", err)
	}
	if _, err := c.Advertise(testCtx(t), `*`); !client.IsCode(err, client.CodeForbidden) {
		t.Fatalf("advertise *: %v, want CodeForbidden", err)
	}
	if _, err := c.Advertise(testCtx(t), `tenant == "a" && x > 1`); err != nil {
		t.Fatalf("advertise within: %v", err)
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
}
