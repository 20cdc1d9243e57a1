package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestMatchBlocksOfEvents runs more events than one batch (matchBatch)
// through sift match with fast, fast-parallel and scan: the lines come in
// event order, numbered across the blocks, and are the same for all three.
func TestMatchBlocksOfEvents(t *testing.T) {
	var subs, events strings.Builder
	for i := range 120 {
		fmt.Fprintf(&subs, "x >= %d && x < %d\n", i*7%100, i*7%100+15)
	}
	n := 2*matchBatch + 37
	for i := range n {
		fmt.Fprintf(&events, `{"x":%d}`+"\n", i*13%120)
	}
	subsFile := writeFile(t, "subs.txt", subs.String())
	eventsFile := writeFile(t, "events.jsonl", events.String())
	want, errOut, code := sift(t, "match", "--subs", subsFile, "--events", eventsFile, "--index", "scan")
	if code != 0 {
		t.Fatalf("scan: status %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	if len(lines) != n || !strings.HasPrefix(lines[n-1], fmt.Sprintf(`{"event":%d,`, n-1)) {
		t.Fatalf("scan printed %d lines, the last %q", len(lines), lines[len(lines)-1])
	}
	for _, name := range []string{"fast", "fast-parallel"} {
		out, errOut, code := sift(t, "match", "--subs", subsFile, "--events", eventsFile, "--index", name)
		if code != 0 || out != want {
			t.Errorf("--index %s: status %d, %d bytes of output, scan's %d; stderr %s", name, code, len(out), len(want), errOut)
		}
	}
	// The layout flags, and a size hint that makes the index take its
	// large-index layout, change how the index is built, not what it
	// matches.
	for _, flags := range [][]string{
		{"--index", "fast", "--cells", "4", "--segment", "50", "--narrow-slots"},
		{"--index", "fast", "--expect", "10000000"},
		{"--index", "fast-parallel", "--expect", "10000000", "--wide-slots", "--segment", "30"},
	} {
		args := append([]string{"match", "--subs", subsFile, "--events", eventsFile}, flags...)
		out, errOut, code := sift(t, args...)
		if code != 0 || out != want {
			t.Errorf("%v: status %d, %d bytes of output, scan's %d; stderr %s", flags, code, len(out), len(want), errOut)
		}
	}
	for _, c := range []struct {
		flags []string
		err   string
	}{
		{[]string{"--index", "scan", "--cells", "4"}, "are for fast and fast-parallel, not scan"},
		{[]string{"--narrow-slots", "--wide-slots"}, "exclude each other"},
	} {
		args := append([]string{"match", "--subs", subsFile, "--events", eventsFile}, c.flags...)
		_, errOut, code := sift(t, args...)
		if code == 0 || !strings.Contains(errOut, c.err) {
			t.Errorf("%v: status %d, stderr %q, want an error containing %q", c.flags, code, errOut, c.err)
		}
	}
}
