package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/router"
)

// TestMeshDemo runs the live-mesh demo at a small scale: it fails if any
// subscriber misses, duplicates or reorders an event, and the per-link
// table must show the publishers' routers filtering (no link back toward
// a router without subscribers carries events).
func TestMeshDemo(t *testing.T) {
	t.Run("exact", func(t *testing.T) { checkMeshDemo(t, MeshDemoOptions{Events: 2000, Seed: 3}) })
	t.Run("bloom", func(t *testing.T) {
		checkMeshDemo(t, MeshDemoOptions{Events: 2000, Seed: 3, Mode: "bloom",
			Configure: func(c *router.Config) { c.Forward = router.ForwardBloom }})
	})
}

func checkMeshDemo(t *testing.T, opts MeshDemoOptions) {
	var out bytes.Buffer
	if err := MeshDemo(&out, opts); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	if !strings.Contains(text, "ok: each matching event once") {
		t.Errorf("no subscriber reported ok:\n%s", text)
	}
	sent := linkCounts(text)
	for _, link := range []string{"r2 -> r1", "r2 -> r3", "r4 -> r2"} {
		if v, ok := sent[link]; !ok || v != "0" {
			t.Errorf("link %s carried %q events, want 0 (no subscriber behind it):\n%s", link, v, text)
		}
	}
	for _, link := range []string{"r1 -> r2", "r3 -> r2", "r2 -> r4"} {
		if v, ok := sent[link]; !ok || v == "0" {
			t.Errorf("link %s carried %q events, want some:\n%s", link, v, text)
		}
	}
}

// linkCounts reads the per-link table: "rA -> rB COUNT ...".
func linkCounts(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[1] == "->" {
			out[f[0]+" -> "+f[2]] = f[3]
		}
	}
	return out
}
