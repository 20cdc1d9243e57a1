package router_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
)

// TestSubscriptionOnNewAttributeWhileStreaming: the router decodes only
// the attributes its filters name (selective decoding). While a publisher
// streams events, a subscription on an attribute no filter named before
// (`late`) is installed; every matching event published after its
// Subscribe returned is delivered to it, whole (every attribute, not just
// the wanted ones), and the older subscription keeps getting all of its
// events.
func TestSubscriptionOnNewAttributeWhileStreaming(t *testing.T) {
	env := start(t, nil)
	ctx := testCtx(t)
	ibm, err := dial(t, env, "sub-ibm", client.Options{}).Subscribe(ctx, `symbol == "IBM"`)
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t, env, "pub", client.Options{BatchSize: 16})
	const n = 30001 // n-1 is a multiple of 3: the last event matches `late`
	evs := stockEvents(7, n)
	for i, e := range evs {
		evs[i] = withAttr(e, "late", match.Bool(i%3 == 0))
	}
	var published atomic.Int64 // events whose Publish returned
	pubErr := make(chan error, 1)
	go func() {
		for _, e := range evs {
			if err := pub.Publish(ctx, e); err != nil {
				pubErr <- err
				return
			}
			published.Add(1)
		}
		pubErr <- pub.Flush(ctx)
	}()
	for published.Load() < n/10 { // streaming well under way
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	late, err := dial(t, env, "sub-late", client.Options{}).Subscribe(ctx, `late == true`)
	if err != nil {
		t.Fatal(err)
	}
	// Events from here on were published after Ready. The + 1: the
	// publisher's Publish of event published.Load() may have returned,
	// its batch gone out, before the count moved.
	ready := int(published.Load()) + 1
	if ready >= n {
		t.Fatalf("the publisher finished before the subscription was ready: raise n")
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := sameEvents(collect(t, ibm, len(expected(`symbol == "IBM"`, evs))), expected(`symbol == "IBM"`, evs)); err != nil {
			t.Errorf("symbol == IBM: %v", err)
		}
	}()
	// The last event matches `late`: reading up to it sees everything the
	// subscription got.
	got := map[int64]match.Event{}
	for {
		e, err := late.Next(ctx)
		if err != nil {
			t.Fatalf("late == true after %d events: %v", len(got), err)
		}
		seq, _ := e.Get("seq")
		got[seq.AsInt()] = e
		if seq.AsInt() == n-1 {
			break
		}
	}
	missing := 0
	for i := ready; i < n; i++ {
		if i%3 != 0 {
			continue
		}
		if e, ok := got[int64(i)]; !ok {
			missing++
		} else if !e.Equal(evs[i]) {
			t.Fatalf("event %d delivered as %v, published as %v", i, e, evs[i])
		}
	}
	if missing > 0 {
		t.Fatalf("%d events matching late == true published after it was ready (from event %d of %d) were not delivered", missing, ready, n)
	}
	if err := <-pubErr; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	t.Logf("subscription ready after %d of %d events; it got %d", ready, n, len(got))
}
