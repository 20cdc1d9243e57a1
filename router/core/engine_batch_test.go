package core

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// TestEngineSubscribeBatch: a batch installs all its filters under
// consecutive ids, or (an id in use, the limit passed) none of them.
func TestEngineSubscribeBatch(t *testing.T) {
	e := NewEngine(match.NewScan(), 5)
	if err := e.Attach(1, KindClient); err != nil {
		t.Fatal(err)
	}
	fs := func(texts ...string) []match.Filter {
		var out []match.Filter
		for _, s := range texts {
			out = append(out, match.MustParse(s))
		}
		return out
	}
	if err := e.Subscribe(1, 12, "x > 0"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		first uint64
		fs    []match.Filter
		code  wire.Code
		want  string
	}{
		{10, fs("x == 1", "x == 2", "x == 3"), wire.CodeDuplicateSubscription, "id 12 (filter 2 of the batch)"},
		{20, fs("x == 1", "x == 2", "x == 3", "x == 4", "x == 5"), wire.CodeTooManySubscriptions, "exceed the limit of 5"},
	} {
		err := e.SubscribeBatch(1, c.first, c.fs)
		if wire.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("batch from %d: %v, want %s %q", c.first, err, c.code, c.want)
		}
		if e.Subscriptions() != 1 {
			t.Fatalf("batch from %d refused but %d subscriptions", c.first, e.Subscriptions())
		}
	}
	if err := e.SubscribeBatch(1, 20, fs("x == 1", "x == 2", "x < 3", "y exists")); err != nil {
		t.Fatal(err)
	}
	hits := e.Route(2, match.MustEvent(match.Attr{Name: "x", Value: match.Int(2)}))
	if len(hits) != 1 || len(hits[0].Subs) != 3 {
		t.Fatalf("x=2 hits %+v, want subscriptions 12, 21 and 22", hits)
	}
	e.UnsubscribeBatch(1, 20, 4)
	if e.Subscriptions() != 1 {
		t.Fatalf("%d subscriptions after UnsubscribeBatch, want 1", e.Subscriptions())
	}
}
