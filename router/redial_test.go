package router

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestRedialBackoff checks keepLinked's backoff: dials that fail (however
// long they took, e.g. at the 10 s handshake timeout) double the wait up
// to maxRedial and never reset it; only a link that was up for longer than
// maxRedial starts it over; a shorter-lived link does not.
func TestRedialBackoff(t *testing.T) {
	outcomes := []time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, maxRedial + time.Second, 0, 5 * time.Second, 0}
	// bound[i] is the backoff wait i is drawn under: waits lie in [b/2, b].
	bound := []time.Duration{minRedial, 2 * minRedial, 4 * minRedial, 8 * minRedial, 16 * minRedial, 32 * minRedial, 64 * minRedial, maxRedial, maxRedial, maxRedial,
		minRedial, 2 * minRedial, 4 * minRedial, 8 * minRedial}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &Router{log: slog.New(slog.DiscardHandler)}
	var waits []time.Duration
	dials := 0
	dial := func() (time.Duration, error) {
		up := outcomes[dials]
		dials++
		if up == 0 {
			return 0, errors.New("dial peer: timeout: no recent network activity")
		}
		return up, nil
	}
	wait := func(_ context.Context, d time.Duration) bool {
		waits = append(waits, d)
		if len(waits) == len(outcomes) {
			cancel()
			return false
		}
		return true
	}
	r.redialLoop(ctx, "peer:1", dial, wait)
	if len(waits) != len(bound) {
		t.Fatalf("%d waits, want %d", len(waits), len(bound))
	}
	for i, d := range waits {
		if d < bound[i]/2 || d > bound[i] {
			t.Errorf("wait %d after up=%v: %v, want within [%v, %v]", i, outcomes[i], d, bound[i]/2, bound[i])
		}
	}
}
