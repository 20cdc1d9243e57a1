package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDurableSubCLI runs `sift sub --durable` against one router (phb,
// hosting pubend phb) through the cases of its contract:
//   - a new id starts now: events published before it are not delivered;
//   - the same id with another filter is refused, and the log is untouched;
//   - a restart on its log, with a torn last line, truncates the line (and
//     says so) and continues with no duplicate;
//   - an empty log with a known id resumes from the id's last
//     acknowledgement at the SHB: it gets what was published while it was
//     away, and nothing it had acknowledged.
func TestDurableSubCLI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m := newDurableMesh(t, ctx, nil, map[string][]string{"phb": nil})
	m.startAll()
	defer m.stopAll()
	events := seqEvents(400, 5)
	publish := func(from, to int) { // seqs from..to, inclusive
		t.Helper()
		path := writeEvents(t, t.TempDir(), events[from-1:to])
		out, err := runBin(t, ctx, nil, "sift", "pub", "--durable", "--router", m.nodes["phb"].addr, "--certs", m.certDir, path)
		if err != nil || !publishedRE.MatchString(out) {
			t.Fatalf("pub %d..%d: %v\n%s", from, to, err, out)
		}
	}
	seqsIn := func(s *durableSub) []int64 {
		t.Helper()
		l, err := readSubLog(s.file)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, e := range l.events {
			seqs = append(seqs, e.seq)
		}
		return seqs
	}
	wantSeqs := func(s *durableSub, from, to int64) []int64 {
		var out []int64
		for _, q := range matchingSeqs(s.parsed, events) {
			if q >= from && q <= to {
				out = append(out, q)
			}
		}
		return out
	}
	checkSeqs := func(what string, s *durableSub, from, to int64) {
		t.Helper()
		want := wantSeqs(s, from, to)
		got := waitLogs(ctx, []*durableSub{s}, []int{len(want)}, 20*time.Second)
		if seqs := seqsIn(s); got[0] != len(want) || !equalSeqs(seqs, want) {
			t.Fatalf("%s: log holds seqs %v, want %v", what, seqs, want)
		}
	}

	publish(1, 100) // before the subscription: not delivered
	s := m.newSub("s", `side == "buy"`, "phb")
	m.startSub(s)
	publish(101, 200)
	checkSeqs("new id", s, 101, 200)

	other := *s
	other.filter = `side == "sell"`
	out, err := runBin(t, ctx, nil, "sift", "sub", "--durable", s.id, "--out", s.file, "--router", m.nodes["phb"].addr, "--certs", m.certDir, other.filter)
	if err == nil || !strings.Contains(out, "refused") {
		t.Fatalf("same id, other filter: %v\n%s", err, out)
	}

	s.proc.kill()
	publish(201, 250)
	f, _ := os.OpenFile(s.file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"pubend":"phb","tick":`)
	f.Close()
	m.startSub(s)
	if !strings.Contains(s.proc.stderr(), "truncated a torn last line") {
		t.Errorf("restart on a torn log did not say so; stderr:\n%s", s.proc.stderr())
	}
	publish(251, 300)
	checkSeqs("restart on a torn log", s, 101, 300)

	// An empty log: resume from the last acknowledgement the SHB recorded.
	// Acknowledgements are asynchronous, so first wait until it covers
	// everything logged.
	l, err := readSubLog(s.file)
	if err != nil {
		t.Fatal(err)
	}
	last := l.events[len(l.events)-1]
	if acked := m.waitAcked(ctx, "phb", s.id, last.pubend, last.tick, 20*time.Second); acked < last.tick {
		t.Fatalf("the SHB recorded an acknowledgement up to %d, not the last logged tick %d", acked, last.tick)
	}
	s.proc.stop()
	os.Truncate(s.file, 0)
	publish(301, 400)
	m.startSub(s)
	checkSeqs("empty log, known id", s, 301, 400)
	s.proc.stop()
}

// TestDurablePubGivesUp: with no router at the address, `sift pub
// --durable` fails after --timeout with an error saying so.
func TestDurablePubGivesUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := newDurableMesh(t, ctx, nil, map[string][]string{"phb": nil})
	path := writeEvents(t, m.dir, seqEvents(3, 6))
	start := time.Now()
	out, err := runBin(t, ctx, nil, "sift", "pub", "--durable", "--router", m.nodes["phb"].addr, "--certs", m.certDir, "--timeout", "2s", path)
	took := time.Since(start)
	if err == nil || !strings.Contains(out, "reachable") {
		t.Fatalf("pub with no router: %v\n%s", err, out)
	}
	if took < 2*time.Second || took > 20*time.Second {
		t.Fatalf("pub gave up after %v, want about the 2s --timeout", took)
	}
}

func equalSeqs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
