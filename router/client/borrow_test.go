package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
	"pgregory.net/rapid"
)

// borrowFilters are the subscriptions of the delivery tests: equality,
// ranges, prefix, bool, exists, and one matching everything, so events go
// to several subscriptions of a connection at once.
var borrowFilters = []string{
	`symbol == "IBM"`,
	`price < 50`,
	`symbol prefix "M" && volume >= 500`,
	`hot == true`,
	`note exists && price >= 90`,
	`*`,
}

// randomEvents returns n events with string, float, int and bool values
// (notes of varied length, so frames differ byte for byte), from seed.
func randomEvents(seed uint64, n int) []match.Event {
	r := rand.New(rand.NewPCG(seed, 7))
	symbols := []string{"IBM", "MSFT", "META", "ORCL", "SAP"}
	evs := make([]match.Event, n)
	for i := range evs {
		attrs := []match.Attr{
			{Name: "hot", Value: match.Bool(r.IntN(2) == 0)},
			{Name: "i", Value: match.Int(int64(i))},
			{Name: "price", Value: match.MustFloat(float64(r.IntN(10000)) / 100)},
			{Name: "symbol", Value: match.Str(symbols[r.IntN(len(symbols))])},
			{Name: "volume", Value: match.Int(int64(r.IntN(1000)))},
		}
		if r.IntN(3) > 0 {
			attrs = append(attrs, match.Attr{Name: "note", Value: match.Str(strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(80)))})
		}
		evs[i] = match.MustEvent(attrs...)
	}
	return evs
}

// sink collects a connection's deliveries per subscription filter, from
// its callback (the reader goroutine) while the test reads them.
type sink struct {
	mu   sync.Mutex
	got  map[string][]match.Event
	done chan struct{} // closed on the end marker
}

func newSink() *sink { return &sink{got: map[string][]match.Event{}, done: make(chan struct{})} }

const endFilter = `end exists`

func (k *sink) add(s *client.Subscription, e match.Event) {
	if s.Filter() == endFilter {
		close(k.done)
		return
	}
	k.mu.Lock()
	k.got[s.Filter()] = append(k.got[s.Filter()], e)
	k.mu.Unlock()
}

func startEnv(t *testing.T) *local.Env {
	t.Helper()
	env, err := local.Start(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	return env
}

func dialOpts(t *testing.T, env *local.Env, opts client.Options) *client.Client {
	t.Helper()
	opts.TLS = env.ClientTLS
	c, err := client.Dial(context.Background(), env.Addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func subscribeAll(t *testing.T, c *client.Client, filters ...string) []*client.Subscription {
	t.Helper()
	var subs []*client.Subscription
	for _, f := range filters {
		s, err := c.Subscribe(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	return subs
}

// TestBorrowedDeliveryAsOwned: three subscriber connections with the same
// filters (owned events through OnEvent, borrowed events kept with
// KeepEvent through OnBorrowedEvent, owned events from the channels) each
// get, per subscription, exactly the published events the filter matches,
// once, in publish order. The owned events are compared only after every
// frame has gone through the readers' reused frame buffers, so an owned
// event aliasing that buffer would fail.
func TestBorrowedDeliveryAsOwned(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	events := randomEvents(seed, 3000)
	env := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	owned, borrowed := newSink(), newSink()
	keep := func(s *client.Subscription, e match.Event) { borrowed.add(s, client.KeepEvent(e)) }
	all := append(borrowFilters[:len(borrowFilters):len(borrowFilters)], endFilter)
	subscribeAll(t, dialOpts(t, env, client.Options{OnEvent: owned.add}), all...)
	subscribeAll(t, dialOpts(t, env, client.Options{OnBorrowedEvent: keep}), all...)
	chans := subscribeAll(t, dialOpts(t, env, client.Options{SubscriptionBuffer: len(events) + 1}), borrowFilters...)

	events = append(events, match.MustEvent(match.Attr{Name: "end", Value: match.Bool(true)})) // `*` gets it too
	pub := dialOpts(t, env, client.Options{BatchSize: 100})
	if err := pub.Publish(ctx, events...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []*sink{owned, borrowed} {
		select {
		case <-k.done:
		case <-ctx.Done():
			t.Fatal("no end marker")
		}
	}
	for i, f := range borrowFilters {
		want := expected(t, f, events)
		fromChan := make([]match.Event, 0, len(want))
		for range want {
			e, err := chans[i].Next(ctx)
			if err != nil {
				t.Fatalf("%s: channel: %v", f, err)
			}
			fromChan = append(fromChan, e)
		}
		for name, got := range map[string][]match.Event{"OnEvent": owned.got[f], "OnBorrowedEvent+KeepEvent": borrowed.got[f], "channel": fromChan} {
			if err := sameEvents(got, want); err != nil {
				t.Errorf("%s, %s: %v", f, name, err)
			}
		}
	}
}

// expected returns the events filter matches, in order.
func expected(t *testing.T, filter string, events []match.Event) []match.Event {
	t.Helper()
	f, err := match.Parse(filter)
	if err != nil {
		t.Fatal(err)
	}
	var out []match.Event
	for _, e := range events {
		if f.Matches(e) {
			out = append(out, e)
		}
	}
	return out
}

func sameEvents(got, want []match.Event) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d events, want %d", len(got), len(want))
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			return fmt.Errorf("event %d is %v, want %v", i, got[i], want[i])
		}
	}
	return nil
}

// TestBorrowedEventsDuringTheCall: inside OnBorrowedEvent the event reads
// as published (Get, String) for every delivery, and the subscription is
// the one that matched it.
func TestBorrowedEventsDuringTheCall(t *testing.T) {
	events := randomEvents(1, 500)
	env := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var bad []string
	done := make(chan struct{})
	n := 0
	check := func(s *client.Subscription, e match.Event) {
		if s.Filter() == endFilter {
			close(done)
			return
		}
		i, _ := e.Get("i")
		if want := events[i.AsInt()]; e.String() != want.String() || !match.MustParse(s.Filter()).Matches(e) {
			bad = append(bad, fmt.Sprintf("%s got %v, want %v", s.Filter(), e, want))
		}
		n++
	}
	subscribeAll(t, dialOpts(t, env, client.Options{OnBorrowedEvent: check}), `price >= 0`, endFilter)
	pub := dialOpts(t, env, client.Options{BatchSize: 64})
	if err := pub.Publish(ctx, append(events, match.MustEvent(match.Attr{Name: "end", Value: match.Bool(true)}))...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("no end marker")
	}
	if n != len(events) || len(bad) > 0 {
		t.Fatalf("%d deliveries, want %d; wrong: %v", n, len(events), bad)
	}
}

// TestBorrowedUnsubscribeAndClose races deliveries to OnBorrowedEvent with
// Unsubscribe and Close (run it with -race): every event a subscription
// got is one it matches, in publish order; the unsubscribed subscription
// ends with ErrUnsubscribed, the others with ErrClosed.
func TestBorrowedUnsubscribeAndClose(t *testing.T) {
	events := randomEvents(2, 50000)
	env := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k := newSink()
	c := dialOpts(t, env, client.Options{OnBorrowedEvent: func(s *client.Subscription, e match.Event) {
		k.add(s, client.KeepEvent(e))
	}})
	subs := subscribeAll(t, c, borrowFilters...)
	pub := dialOpts(t, env, client.Options{BatchSize: 32})
	stop, published := make(chan struct{}), make(chan error, 1)
	go func() { // publishes until the subscriber has closed
		for i := 0; i < len(events); i++ {
			select {
			case <-stop:
				published <- pub.Flush(ctx)
				return
			default:
			}
			if err := pub.Publish(ctx, events[i]); err != nil {
				published <- err
				return
			}
		}
		published <- pub.Flush(ctx)
	}()
	waitFor(t, k, borrowFilters[1], 100)
	if err := c.Unsubscribe(ctx, subs[0]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, k, borrowFilters[1], 1000)
	c.Close()
	close(stop)
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	if err := subs[0].Err(); !errors.Is(err, client.ErrUnsubscribed) {
		t.Errorf("unsubscribed: Err = %v", err)
	}
	for _, s := range subs[1:] {
		if err := s.Err(); !errors.Is(err, client.ErrClosed) {
			t.Errorf("%s: Err = %v, want ErrClosed", s.Filter(), err)
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, f := range borrowFilters {
		if err := inOrderSubset(k.got[f], expected(t, f, events)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// waitFor waits until k holds n events for filter.
func waitFor(t *testing.T, k *sink, filter string, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		k.mu.Lock()
		got := len(k.got[filter])
		k.mu.Unlock()
		if got >= n {
			return
		}
	}
	t.Fatalf("%s: fewer than %d events within a minute", filter, n)
}

// inOrderSubset checks got is a prefix of want: deliveries stop when the
// subscription or the connection ends, and skip nothing before.
func inOrderSubset(got, want []match.Event) error {
	if len(got) > len(want) {
		return fmt.Errorf("%d events, more than the %d matching", len(got), len(want))
	}
	return sameEvents(got, want[:len(got)])
}

// TestHandlersExclusive: OnEvent and OnBorrowedEvent together are refused
// before dialling.
func TestHandlersExclusive(t *testing.T) {
	f := func(*client.Subscription, match.Event) {}
	_, err := client.Dial(context.Background(), "127.0.0.1:1", client.Options{TLS: &tls.Config{}, OnEvent: f, OnBorrowedEvent: f})
	if err == nil || !strings.Contains(err.Error(), "exclusive") {
		t.Fatalf("Dial with both handlers: %v, want the exclusive error", err)
	}
}

// TestKeepEvent: the kept copy equals the event and shares none of its
// memory: no name or string value of the copy points into the original's.
func TestKeepEvent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 8).Draw(t, "attrs")
		var attrs []match.Attr
		for i := range n {
			name := fmt.Sprintf("a%d", i)
			var v match.Value
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0:
				v = match.Str(rapid.String().Draw(t, "str"))
			case 1:
				v = match.Int(rapid.Int64().Draw(t, "int"))
			case 2:
				v = match.MustFloat(rapid.Float64Range(-1e9, 1e9).Draw(t, "float"))
			default:
				v = match.Bool(rapid.Bool().Draw(t, "bool"))
			}
			attrs = append(attrs, match.Attr{Name: name, Value: v})
		}
		e := match.MustEvent(attrs...)
		kept := client.KeepEvent(e)
		if !kept.Equal(e) {
			t.Fatalf("KeepEvent(%v) = %v", e, kept)
		}
		for i := range e.Len() {
			a, b := e.At(i), kept.At(i)
			if overlaps(a.Name, b.Name) {
				t.Fatalf("attribute %d: the copy's name aliases the original's", i)
			}
			if a.Value.Kind() == match.KindString && overlaps(a.Value.AsString(), b.Value.AsString()) {
				t.Fatalf("attribute %d: the copy's string aliases the original's", i)
			}
		}
	})
}

// overlaps reports whether two non-empty strings share bytes in memory.
func overlaps(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.StringData(a))), uintptr(unsafe.Pointer(unsafe.StringData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}
