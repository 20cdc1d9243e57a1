package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// TestResyncStreamed: r2 (dialling r1) hosts `sift sub --filters` with
// 100,000 filters k == "vI", none covering another, so r2 forwards all of
// them to r1: as one Routes message that would be above the frame limit
// r1 reads its links with (the test checks it is). r1 is SIGKILLed and
// restarted; the link comes back and r2's snapshot must reach r1 in
// parts until r1 holds every filter (its /debug/routes); then events
// published at r1 with `sift pub` must reach exactly the matching
// subscriptions, each printed once, in publish order.
func TestResyncStreamed(t *testing.T) {
	const n, events = 100_000, 200
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := newCluster(t, ctx, []string{"--table", "shallow", "--max-subscriptions-per-conn", fmt.Sprint(n)})
	r1 := c.start("r1")
	r2 := c.start("r2", r1)
	c.waitLinks(r1, r2)
	c.waitLinks(r2, r1)

	var subs bytes.Buffer
	snapshot := 0 // the bytes of one Routes holding every filter
	for i := range n {
		text := match.MustParse(fmt.Sprintf("k == \"v%d\"", i)).String()
		fmt.Fprintln(&subs, text)
		snapshot += len(text) + 2
	}
	if snapshot <= wire.DefaultMaxFrame {
		t.Fatalf("a snapshot of %d bytes fits one frame (%d): the test does not test streaming", snapshot, wire.DefaultMaxFrame)
	}
	rng := rand.New(rand.NewPCG(19, 1))
	var evBuf bytes.Buffer
	var want []string
	for range events {
		k := rng.IntN(n + n/10) // a tenth match nothing
		fmt.Fprintf(&evBuf, "{\"k\":\"v%d\"}\n", k)
		if k < n {
			want = append(want, fmt.Sprintf(`{"subs":[%d],"event":{"k":"v%d"}}`, k, k))
		}
	}
	subsFile, eventsFile := filepath.Join(c.dir, "subs.txt"), filepath.Join(c.dir, "events.jsonl")
	if err := os.WriteFile(subsFile, subs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(eventsFile, evBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	installStart := time.Now()
	sub := startProc(t, ctx, "sift", "sub", "--router", r2.addr, "--certs", c.certDir, "--filters", subsFile,
		"--count", fmt.Sprint(len(want)), "--timeout", "110s")
	if got := sub.waitLine(t, ctx, subFiltersReady)[1]; got != fmt.Sprint(n) {
		t.Fatalf("ready %s, want ready %d", got, n)
	}
	t.Logf("%d filters installed at r2 and r1 in %v", n, time.Since(installStart).Round(time.Millisecond))
	held := func() error {
		r, err := r1.routes()
		if err != nil {
			return err
		}
		l, ok := r.link("r2")
		if !ok {
			return fmt.Errorf("r1 has no link to r2")
		}
		if len(l.Received) != n {
			return fmt.Errorf("r1 holds %d filters from r2, want %d", len(l.Received), n)
		}
		return nil
	}
	eventually(t, ctx, "r1 holds r2's filters before the restart", held)
	t.Logf("r1 holds them %v after the install began", time.Since(installStart).Round(time.Millisecond))

	c.restart(r1)
	start := time.Now()
	c.waitLinks(r1, r2)
	eventually(t, ctx, "r1 holds r2's filters after its restart", held)
	t.Logf("r1 restarted; %d filters (%d bytes as one message) back at r1 %v later", n, snapshot, time.Since(start).Round(time.Millisecond))

	out, err := runBin(t, ctx, nil, "sift", "pub", "--router", r1.addr, "--certs", c.certDir, eventsFile)
	if err != nil || out != fmt.Sprintf("published %d events\n", events) {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	if stderr, err := sub.wait(); err != nil {
		t.Fatalf("sub --filters: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(sub.stdout.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	for i, l := range lines {
		var got, exp any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
		json.Unmarshal([]byte(want[i]), &exp)
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Fatalf("line %d: %s, want %s (Scan, publish order)", i, l, want[i])
		}
	}
	c.stopAll()
}
