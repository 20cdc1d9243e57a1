package core

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/sift-pubsub/sift/match"
)

// batchFilter draws a filter over the attributes a (numbers) and b
// (strings), so that the parallel index's shards get interval cells,
// points and one-by-one checks.
func batchFilter(t *rapid.T) string {
	n := rapid.IntRange(-2, 12).Draw(t, "n")
	switch rapid.IntRange(0, 6).Draw(t, "shape") {
	case 0:
		return fmt.Sprintf("a > %d", n)
	case 1:
		return fmt.Sprintf("a >= %d && a < %d", n, n+rapid.IntRange(0, 6).Draw(t, "w"))
	case 2:
		return fmt.Sprintf("a == %d", n)
	case 3:
		return fmt.Sprintf(`b == "%c"`, 'w'+rune(rapid.IntRange(0, 3).Draw(t, "c")))
	case 4:
		return fmt.Sprintf(`a != %d && b prefix "x"`, n)
	case 5:
		return `b contains "y"`
	}
	return `*`
}

func batchEvent(t *rapid.T) match.Event {
	return match.MustEvent(
		match.Attr{Name: "a", Value: match.Int(rapid.Int64Range(-3, 13).Draw(t, "a"))},
		match.Attr{Name: "b", Value: match.Str(rapid.SampledFrom([]string{"w", "x", "xy", "y", "z"}).Draw(t, "b"))})
}

// TestRouteBatchAgreesWithScan routes random batches through an engine
// over a parallel index spread over 1 to 3 shards from its first
// subscription (so every batch is matched on every shard at once), and
// checks every event's hits against an engine over Scan routing the same
// events one at a time, through random subscribes, unsubscribes and
// detaches between batches and, inside a batch, a detach or unsubscribe
// made while an event's hits are handled (as a slow consumer's is).
func TestRouteBatchAgreesWithScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := rapid.IntRange(1, 3).Draw(t, "shards")
		par := match.NewParallel(shards, match.FastConfig{TailSize: rapid.SampledFrom([]int{1, 4, 512}).Draw(t, "tail")}).SetSplitAt(0)
		got, want := NewEngine(par, 0), NewEngine(match.NewScan(), 0)
		n := rapid.IntRange(1, 6).Draw(t, "ifaces")
		kinds := make([]IfaceKind, n)
		for i := range n {
			kinds[i] = rapid.SampledFrom([]IfaceKind{KindClient, KindNeighbour}).Draw(t, "kind")
			got.Attach(ifaceID(i), kinds[i])
			want.Attach(ifaceID(i), kinds[i])
		}
		both := func(f func(e *Engine) error) {
			g, w := f(got), f(want)
			if (g == nil) != (w == nil) {
				t.Fatalf("engines disagree: %v against Scan's %v", g, w)
			}
		}
		for range rapid.IntRange(1, 12).Draw(t, "rounds") {
			for range rapid.IntRange(0, 30).Draw(t, "subscribes") {
				iface, sub, text := ifaceID(rapid.IntRange(0, n-1).Draw(t, "iface")), rapid.Uint64Range(0, 40).Draw(t, "sub"), batchFilter(t)
				both(func(e *Engine) error { return e.Subscribe(iface, sub, text) })
			}
			for range rapid.IntRange(0, 5).Draw(t, "unsubscribes") {
				iface, sub := ifaceID(rapid.IntRange(0, n-1).Draw(t, "iface")), rapid.Uint64Range(0, 40).Draw(t, "sub")
				both(func(e *Engine) error { return e.Unsubscribe(iface, sub) })
			}
			evs := make([]match.Event, rapid.IntRange(0, 25).Draw(t, "events"))
			for i := range evs {
				evs[i] = batchEvent(t)
			}
			from := ifaceID(rapid.IntRange(0, n-1).Draw(t, "from"))
			// Optionally change the subscriptions while the hits of event
			// at are handled: both engines at the same point.
			at := rapid.IntRange(-1, len(evs)-1).Draw(t, "change at")
			victim := ifaceID(rapid.IntRange(0, n-1).Draw(t, "victim"))
			change := func(e *Engine, i int) {
				if i != at {
					return
				}
				e.Detach(victim)
				e.Attach(victim, kinds[victim])
			}
			var wants []string
			for i, ev := range evs {
				wants = append(wants, fmt.Sprint(want.Route(from, ev)))
				change(want, i)
			}
			calls := 0
			got.RouteBatch(from, evs, func(i int, hits []Hit) {
				if i != calls {
					t.Fatalf("event %d handed over as the %d-th", i, calls)
				}
				calls++
				if g := fmt.Sprint(hits); g != wants[i] {
					t.Fatalf("batch of %d, event %d %v from %d: got %v, want %v", len(evs), i, evs[i], from, g, wants[i])
				}
				change(got, i)
			})
			if calls != len(evs) {
				t.Fatalf("%d of %d events handed over", calls, len(evs))
			}
		}
	})
}
