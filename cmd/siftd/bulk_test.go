package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

var subFiltersReady = regexp.MustCompile(`^ready (\d+)$`)

// TestSubFiltersChain runs three siftd processes r1 - r2 - r3 (the
// shallow table; 40,000 subscriptions per connection) and `sift sub
// --filters` at r3 with a file of 100,000 stock filters between blank and
// comment lines (so three connections, and ids that skip those lines),
// waits for "ready 100000", publishes at r1 with `sift pub`, and checks
// every output line against Scan over the file: one line per event that
// matches some filter, with every matching id ascending, in publish order
// among the lines of one connection.
func TestSubFiltersChain(t *testing.T) {
	const n, events = 100_000, 300
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	initCerts(t, ctx, certDir)
	var routers []*proc
	var addrs []string
	for i, name := range []string{"r1", "r2", "r3"} {
		args := []string{"--name", name, "--listen", "127.0.0.1:0", "--certs", certDir,
			"--data", filepath.Join(dir, name), "--table", "shallow", "--max-subscriptions-per-conn", "40000"}
		if i > 0 {
			args = append(args, "--peer", addrs[i-1])
		}
		p := startProc(t, ctx, "siftd", args...)
		addrs = append(addrs, p.waitLine(t, ctx, readyRE)[1])
		routers = append(routers, p)
	}
	for i, links := range []int{1, 2, 1} {
		for range links {
			routers[i].waitLine(t, ctx, linkUpRE)
		}
	}

	w, err := workload.Stock(workload.StockConfig{Subscriptions: n, Events: events}, 19)
	if err != nil {
		t.Fatal(err)
	}
	var subs bytes.Buffer
	subs.WriteString("# stock filters for TestSubFiltersChain\n\n")
	scan := match.NewScan()
	for i, f := range w.Filters {
		scan.Insert(match.ID(i), f)
		fmt.Fprintln(&subs, f)
		if i%25_000 == 0 {
			subs.WriteString("   \n# a comment, not a filter\n")
		}
	}
	subsFile, eventsFile := filepath.Join(dir, "subs.txt"), filepath.Join(dir, "events.jsonl")
	os.WriteFile(subsFile, subs.Bytes(), 0o644)
	var evBuf bytes.Buffer
	match.WriteEvents(&evBuf, w.Events)
	os.WriteFile(eventsFile, evBuf.Bytes(), 0o644)
	want := wantLines(scan, w.Events)
	if len(want) < 50 || len(want) == len(w.Events) {
		t.Fatalf("%d of %d events match: weak test", len(want), len(w.Events))
	}

	start := time.Now()
	sub := startProc(t, ctx, "sift", "sub", "--router", addrs[2], "--certs", certDir, "--filters", subsFile,
		"--count", fmt.Sprint(len(want)), "--timeout", "100s")
	if got := sub.waitLine(t, ctx, subFiltersReady)[1]; got != fmt.Sprint(n) {
		t.Fatalf("ready %s, want ready %d", got, n)
	}
	t.Logf("%d filters installed through three routers in %v", n, time.Since(start))
	out, err := runBin(t, ctx, nil, "sift", "pub", "--router", addrs[0], "--certs", certDir, eventsFile)
	if err != nil || out != fmt.Sprintf("published %d events\n", events) {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	if stderr, err := sub.wait(); err != nil {
		t.Fatalf("sub --filters: %v\n%s", err, stderr)
	}
	last := checkLines(t, sub.stdout.String(), want, 40000)
	if len(last) < 2 {
		t.Fatalf("lines from %d connections: the file did not spread", len(last))
	}
	for i, r := range routers {
		r.cmd.Process.Signal(syscall.SIGTERM)
		if stderr, err := r.wait(); err != nil {
			t.Fatalf("r%d after SIGTERM: %v\n%s", i+1, err, stderr)
		}
	}
}

// subLine is one line `sift sub --filters` must print: the ids of the
// file's filters an event matches, ascending, and the event.
type subLine struct {
	subs  []int
	event match.Event
}

// wantLines is what `sift sub --filters` prints for events, by Scan over
// the file's filters (ids from 0): one line per matching event.
func wantLines(scan *match.Scan, events []match.Event) []subLine {
	var want []subLine
	for _, e := range events {
		ids := match.SortIDs(scan.Match(e, nil))
		if len(ids) == 0 {
			continue
		}
		l := subLine{event: e}
		for _, id := range ids {
			l.subs = append(l.subs, int(id))
		}
		want = append(want, l)
	}
	return want
}

// checkLines checks stdout of `sift sub --filters` against want: each
// line one of want, each once, and the lines printed on one connection's
// deliveries (the lowest matching id's; perConn filters a connection) in
// publish order; lines of different connections may interleave
// differently. It returns, per connection, the position of its last line.
func checkLines(t *testing.T, stdout string, want []subLine, perConn int) map[int]int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	at := map[string][]int{} // want's lines by their text: their positions
	for i, l := range want {
		k := fmt.Sprint(l.subs, l.event)
		at[k] = append(at[k], i)
	}
	last := map[int]int{} // per connection: the position of its latest line
	for i, text := range lines {
		var got struct {
			Subs  []int           `json:"subs"`
			Event json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal([]byte(text), &got); err != nil || !strings.HasPrefix(text, `{"subs":[`) {
			t.Fatalf("line %d %q: not {\"subs\":[...],\"event\":{...}}: %v", i, text, err)
		}
		e, err := match.ParseEventJSON(got.Event)
		if err != nil {
			t.Fatalf("line %d event: %v", i, err)
		}
		k := fmt.Sprint(got.Subs, e)
		if len(at[k]) == 0 {
			t.Fatalf("line %d: subs %v event %s matches no expected line left (Scan)", i, got.Subs, e)
		}
		pos := at[k][0]
		at[k] = at[k][1:]
		conn := got.Subs[0] / perConn
		if p, ok := last[conn]; ok && p > pos {
			t.Fatalf("line %d (event %d) after event %d on connection %d: out of publish order", i, pos, p, conn)
		}
		last[conn] = pos
	}
	return last
}
