package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDurableDemo runs the durable demo at a small scale: it fails unless
// the subscriber that was away received exactly the matching events of
// every batch, once each, in order.
func TestDurableDemo(t *testing.T) {
	var out bytes.Buffer
	if err := DurableDemo(&out, DurableDemoOptions{Events: 300, Seed: 2}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "catches up") {
		t.Errorf("no catch-up shown:\n%s", out.String())
	}
}
