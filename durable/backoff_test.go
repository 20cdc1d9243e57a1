package durable

import (
	"math/rand/v2"
	"testing"
)

// TestBackoffWait checks the exponential waits, their cap and the jitter
// bounds, and that a seeded source gives the same waits again.
func TestBackoffWait(t *testing.T) {
	want := []Tick{20, 40, 80, 160, 320, 320, 320}
	for i, w := range want {
		if got := backoffWait(i, 20, 320, 0.5, nil); got != w {
			t.Errorf("attempt %d: wait %d, want %d", i, got, w)
		}
	}
	if got := backoffWait(200, 20, 320, 0.5, nil); got != 320 {
		t.Errorf("attempt 200 overflows: %d", got)
	}
	a, b := rand.New(rand.NewPCG(7, 1)), rand.New(rand.NewPCG(7, 1))
	for i := range 50 {
		full := backoffWait(i%6, 1000, 32000, 0, nil)
		got := backoffWait(i%6, 1000, 32000, 0.5, a)
		if got > full || got < full/2 {
			t.Fatalf("attempt %d: jittered wait %d outside [%d, %d]", i%6, got, full/2, full)
		}
		if again := backoffWait(i%6, 1000, 32000, 0.5, b); again != got {
			t.Fatalf("same seed, different wait: %d then %d", got, again)
		}
	}
}

// TestRetryProgress checks that an answer shortens the next wait to
// NackRetry at most and restarts the doubling.
func TestRetryProgress(t *testing.T) {
	cfg := SHBConfig{Node: "shb", Upstream: "r"}
	if err := cfg.populate(); err != nil {
		t.Fatal(err)
	}
	var r retry
	now := Tick(0)
	for range 4 {
		if !r.due(now) {
			t.Fatalf("not due at %d after waiting %d", now, r.wait)
		}
		r.sent(now, &cfg)
		now += r.wait
	}
	if r.wait != 8*cfg.NackRetry {
		t.Fatalf("fourth wait %d, want %d", r.wait, 8*cfg.NackRetry)
	}
	answer := r.last + 3
	r.progressed(answer, &cfg)
	if r.due(answer+cfg.NackRetry-1) || !r.due(answer+cfg.NackRetry) {
		t.Fatalf("after progress the next nack must wait NackRetry from the answer: last %d wait %d", r.last, r.wait)
	}
	r.sent(answer+cfg.NackRetry, &cfg)
	if r.wait != 2*cfg.NackRetry {
		t.Fatalf("after progress the waits grow again from NackRetry: %d", r.wait)
	}
}
