package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRouterDemo runs a small demo: every client must receive exactly what Scan
// says (Demo returns an error otherwise).
func TestRouterDemo(t *testing.T) {
	var out bytes.Buffer
	if err := Demo(&out, DemoOptions{Events: 2000, Desk: 200}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"tape", "desk", "2000 events published", "ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())
}
