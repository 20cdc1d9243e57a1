package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/match"
)

// durablePubendView is a pubend as /debug/durable lists it.
type durablePubendView struct {
	Pubend   string                  `json:"pubend"`
	Host     string                  `json:"host"`
	Released durable.Tick            `json:"released"`
	WaitsFor []string                `json:"waits_for"`
	Reported map[string]durable.Tick `json:"reported"`
}

// pubendViews returns router name's pubends from /debug/durable.
func (m *durableMesh) pubendViews(name string) ([]durablePubendView, error) {
	resp, err := m.http().Get("http://" + m.nodes[name].metrics + "/debug/durable")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var st struct {
		Pubends []durablePubendView `json:"pubends"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("/debug/durable of %s: %w", name, err)
	}
	return st.Pubends, nil
}

// waitDirectory waits until every router lists every router's own pubend
// with its host, and each host's pubend waits for every router's SHB
// (routers started with no durable flags); it fails the test after
// deadline.
func (m *durableMesh) waitDirectory(ctx context.Context, _ string, deadline time.Duration) {
	m.t.Helper()
	var shbs []string
	for _, name := range m.order {
		shbs = append(shbs, name+"/shb")
	}
	end := time.Now().Add(deadline)
	for {
		why := m.directoryMissing(shbs)
		if why == "" {
			return
		}
		if time.Now().After(end) || ctx.Err() != nil {
			m.t.Fatalf("the routers did not learn the mesh within %v: %s\n%s", deadline, why, m.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// directoryMissing says what some router does not know yet ("" if all
// know everything).
func (m *durableMesh) directoryMissing(shbs []string) string {
	for _, name := range m.order {
		ps, err := m.pubendViews(name)
		if err != nil {
			return err.Error()
		}
		for _, host := range m.order {
			i := slices.IndexFunc(ps, func(p durablePubendView) bool { return p.Pubend == host })
			if i < 0 || ps[i].Host != host {
				return fmt.Sprintf("%s does not list pubend %s at %s: %+v", name, host, host, ps)
			}
			if host == name && !slices.Equal(ps[i].WaitsFor, shbs) {
				return fmt.Sprintf("pubend %s waits for %v, want %v", name, ps[i].WaitsFor, shbs)
			}
		}
	}
	return ""
}

// checkPubendLog checks the events of one pubend in a subscriber's log
// against what was published there: each matching event once, in
// publish (tick) order, and nothing else.
func checkPubendLog(l subLog, pubend string, filter match.Filter, published []match.Event) error {
	want := matchingSeqs(filter, published)
	var got []int64
	var last durable.Tick
	for _, e := range l.events {
		if e.pubend != pubend {
			continue
		}
		if e.tick <= last {
			return fmt.Errorf("pubend %s: tick %d after %d", pubend, e.tick, last)
		}
		last = e.tick
		if e.seq < 1 || e.seq > int64(len(published)) || !e.event.Equal(published[e.seq-1]) {
			return fmt.Errorf("pubend %s: %v is not the event published with seq %d", pubend, e.event, e.seq)
		}
		got = append(got, e.seq)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("pubend %s: %d events logged, want %d (first seqs got %v, want %v)", pubend,
			len(got), len(want), got[:min(len(got), 8)], want[:min(len(want), 8)])
	}
	return nil
}

// TestDurableMeshNoFlags: routers a - b - c started with only --name
// --listen --certs --data --peer (and --metrics, to watch them), so each
// hosts a pubend named after itself and nothing durable is configured.
// Every router comes to list every pubend with its host, and each pubend
// waits for all three SHBs (/debug/durable). A durable subscriber at c
// receives every matching event of two durable publishers at a and b
// publishing at once, exactly once and in per-pubend tick order, with no
// gap, while a plain publisher at a reaches a plain subscriber at c; and
// both pubends release what every subscriber acknowledged (release by
// default).
func TestDurableMeshNoFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	m := newDurableMesh(t, ctx, nil, map[string][]string{"a": nil, "b": {"a"}, "c": {"b"}})
	m.noFlags = true
	m.startAll()
	defer m.stopAll()
	m.waitDirectory(ctx, "", 20*time.Second)

	const n = 1500
	evA, evB := seqEvents(n, 21), seqEvents(n, 22)
	fileA := writeEvents(t, t.TempDir(), evA)
	fileB := writeEvents(t, t.TempDir(), evB)
	plain := seqEvents(300, 23)
	filePlain := writeEvents(t, t.TempDir(), plain)

	d := m.newSub("d1", `volume >= 5000`, "c")
	m.startSub(d)
	defer func() {
		if !d.proc.exited() {
			d.proc.kill()
		}
	}()
	plainFilter := match.MustParse(`side == "buy"`)
	wantPlain := scanMatches(plainFilter, plain)
	ps := startProc(t, ctx, "sift", "sub", "--router", m.nodes["c"].addr, "--certs", m.certDir, "--timeout", "60s",
		"--count", fmt.Sprint(len(wantPlain)), plainFilter.String())
	ps.waitLine(t, ctx, subReady)

	pubA := background("pub a", startProc(t, ctx, "sift", "pub", "--durable", "--router", m.nodes["a"].addr,
		"--certs", m.certDir, "--rate", "1000", "--timeout", "60s", fileA))
	pubB := background("pub b", startProc(t, ctx, "sift", "pub", "--durable", "--router", m.nodes["b"].addr,
		"--certs", m.certDir, "--rate", "1000", "--timeout", "60s", fileB))
	time.Sleep(300 * time.Millisecond) // the plain events go while the durable ones flow
	if out, err := runBin(t, ctx, nil, "sift", "pub", "--router", m.nodes["a"].addr, "--certs", m.certDir, filePlain); err != nil {
		t.Fatalf("plain pub: %v\n%s", err, out)
	}
	for _, p := range []*bgProc{pubA, pubB} {
		if err := p.wait(); err != nil || !publishedRE.MatchString(p.p.stdout.String()) {
			t.Fatalf("%s: %v\n%s\n%s\n%s", p.name, err, p.p.stdout.String(), p.stderr(), m.logs())
		}
	}
	stderr, err := ps.wait()
	if err != nil {
		t.Fatalf("plain sub: %v\n%s\n%s", err, stderr, m.logs())
	}
	gotPlain, err := parseSubOutput(ps.stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(gotPlain, wantPlain); err != nil {
		t.Errorf("plain sub at c: %v", err)
	}

	want := len(matchingSeqs(d.parsed, evA)) + len(matchingSeqs(d.parsed, evB))
	got := waitLogs(ctx, []*durableSub{d}, []int{want}, 30*time.Second)
	if got[0] != want {
		t.Errorf("durable sub at c: %d of %d events\n%s", got[0], want, m.logs())
	}
	l, err := readSubLog(d.file)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.gaps) > 0 {
		t.Errorf("durable sub at c: gaps %v", l.gaps)
	}
	for _, c := range []struct {
		pubend string
		events []match.Event
	}{{"a", evA}, {"b", evB}} {
		if err := checkPubendLog(l, c.pubend, d.parsed, c.events); err != nil {
			t.Error(err)
		}
	}
	// Release by default: once the subscriber acknowledged its last
	// event, each pubend releases past it.
	for _, host := range []string{"a", "b"} {
		var last durable.Tick
		for _, e := range l.events {
			if e.pubend == host {
				last = e.tick
			}
		}
		end := time.Now().Add(20 * time.Second)
		for {
			rel, err := m.released(host, host)
			if err == nil && rel >= last {
				break
			}
			if time.Now().After(end) {
				t.Errorf("pubend %s released up to %d (%v), not past the last event %d\n%s", host, rel, err, last, m.logs())
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if metrics := m.durableMetrics("a"); !strings.Contains(metrics, `sift_durable_pubend_log_bytes{pubend="a"}`) ||
		!strings.Contains(metrics, `sift_durable_pubend_members{pubend="a"} 3`) {
		t.Errorf("a's /metrics lacks the pubend's disk use or its 3 members: %s", metrics)
	}
	if err := d.proc.stop(); err != nil {
		t.Errorf("durable sub after SIGTERM: %v\n%s", err, d.proc.stderr())
	}
}
