package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
)

// TestBorrowedCallbackUnsubscribesAndCloses: an OnBorrowedEvent callback
// may call Unsubscribe and Close on its own connection, in the middle of a
// Deliver frame. Unsubscribe returns (the reader is not needed for its
// answer); the unsubscribed subscription gets nothing after it, while the
// other subscription of the same events still gets every one it matches,
// in order, with the right values (the rest of the frame decodes as
// before); after Close, no callback runs at all.
func TestBorrowedCallbackUnsubscribesAndCloses(t *testing.T) {
	events := randomEvents(3, 2000)
	env := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const quitAt, closeAt = 10, 1500 // deliveries of `*` before Unsubscribe (at least), before Close
	var c *client.Client
	var quit *client.Subscription
	k := newSink()
	afterUnsub, afterClose, closed := 0, 0, false
	seen := 0
	unsubErr := make(chan error, 1)
	onEvent := func(s *client.Subscription, e match.Event) {
		if closed {
			afterClose++
			return
		}
		if s == quit && s.Err() != nil {
			afterUnsub++
		}
		k.add(s, client.KeepEvent(e))
		if s.Filter() != `*` {
			return
		}
		seen++
		if price, _ := e.Get("price"); seen >= quitAt && quit.Err() == nil && price.AsFloat() < 50 {
			// The same item goes to quit next: it must not get it.
			unsubErr <- c.Unsubscribe(ctx, quit)
		}
		if seen == closeAt {
			c.Close()
			closed = true
		}
	}
	c = dialOpts(t, env, client.Options{OnBorrowedEvent: onEvent})
	subs := subscribeAll(t, c, `*`, `price < 50`) // an item's callbacks run in this order
	quit = subs[1]
	pub := dialOpts(t, env, client.Options{BatchSize: 200}) // frames of many items
	if err := pub.Publish(ctx, events...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the callback's Close did not end the connection")
	}
	select {
	case err := <-unsubErr:
		if err != nil {
			t.Fatalf("Unsubscribe from the callback: %v", err)
		}
	default:
		t.Fatal("the callback never unsubscribed")
	}
	// The reader has returned once Done is closed and the connection is
	// gone; give it a moment in case it had not yet.
	time.Sleep(50 * time.Millisecond)
	k.mu.Lock()
	defer k.mu.Unlock()
	if afterUnsub > 0 || afterClose > 0 {
		t.Fatalf("%d deliveries after Unsubscribe, %d after Close", afterUnsub, afterClose)
	}
	all := k.got[`*`]
	if err := sameEvents(all, events[:closeAt]); err != nil {
		t.Errorf("*: %v", err)
	}
	if err := inOrderSubset(k.got[`price < 50`], expected(t, `price < 50`, events)); err != nil {
		t.Errorf("price < 50: %v", err)
	}
	if !errors.Is(quit.Err(), client.ErrUnsubscribed) || !errors.Is(subs[0].Err(), client.ErrClosed) {
		t.Errorf("Err: %v and %v, want ErrUnsubscribed and ErrClosed", quit.Err(), subs[0].Err())
	}
}
