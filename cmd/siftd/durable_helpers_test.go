package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/durable"
	"github.com/sift-pubsub/sift/internal/sublog"
	"github.com/sift-pubsub/sift/match"
)

// This file is the harness of the durable kill tests: a mesh of siftd
// processes on fixed addresses (so each can be SIGKILLed and restarted on
// its data folder), durable `sift sub` processes writing their logs, a
// durable `sift pub`, and the checker that reads the logs back.

// bgProc is a process whose stderr is drained in the background (a
// process that logs a lot must never block on a full pipe); the last
// lines are kept for failure messages.
type bgProc struct {
	name string
	p    *proc
	mu   sync.Mutex
	tail []string
	done chan struct{}
}

// background drains p's stderr from now on.
func background(name string, p *proc) *bgProc {
	b := &bgProc{name: name, p: p, done: make(chan struct{})}
	b.tail = append(b.tail, p.stderr...)
	go func() {
		defer close(b.done)
		for line := range p.lines {
			b.mu.Lock()
			if b.tail = append(b.tail, line); len(b.tail) > 400 {
				b.tail = slices.Clone(b.tail[200:])
			}
			b.mu.Unlock()
		}
	}()
	return b
}

// stderr returns the last lines the process wrote to stderr.
func (b *bgProc) stderr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.tail, "\n")
}

// kill sends SIGKILL and reaps the process.
func (b *bgProc) kill() {
	b.p.cmd.Process.Kill()
	b.wait()
}

// stop sends SIGTERM and returns the exit error.
func (b *bgProc) stop() error {
	b.p.cmd.Process.Signal(syscall.SIGTERM)
	return b.wait()
}

// wait reaps the process once its stderr is drained.
func (b *bgProc) wait() error {
	<-b.done
	return b.p.cmd.Wait()
}

// exited reports whether the process has ended (without reaping it).
func (b *bgProc) exited() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// meshNode is one siftd of a durableMesh.
type meshNode struct {
	name, addr string
	metrics    string   // HTTP address of the current process
	peers      []string // names
	proc       *bgProc
	starts     int
	// Set by tests that need them: the network namespace the router
	// runs in, its --listen address when it is not addr, the addresses it
	// dials instead of its peers' addr, the host its metrics are fetched
	// on (its --metrics listens on every address then), and flags of its
	// own.
	ns, listen, metricsHost string
	peerAddrs, flags        []string
}

// durableMesh runs siftd processes with durable delivery: every router is
// a member (runs an SHB); pubend "phb" is hosted by router phb.
type durableMesh struct {
	t       *testing.T
	ctx     context.Context
	dir     string
	certDir string
	nodes   map[string]*meshNode
	order   []string
	extra   []string // flags given to every siftd
	// noFlags starts the routers with no durable flags at all: each hosts
	// a pubend named after itself, and they learn the rest by their links.
	noFlags bool
	// clientNS is the network namespace the clients (sift pub, sift sub
	// and the test's HTTP requests) run in ("": the test's own).
	clientNS string
	// killedLeader is when TestReplicatedPubendFaults killed the leader.
	killedLeader time.Time
}

// http returns the client of the routers' HTTP endpoints: in clientNS,
// with a timeout, so that a router cut off by a test answers with an
// error instead of hanging the test.
func (m *durableMesh) http() *http.Client {
	c := &http.Client{}
	if m.clientNS != "" {
		c = netnsHTTPClient(m.clientNS)
	}
	c.Timeout = 5 * time.Second
	return c
}

// newDurableMesh makes certificates (valid for hosts too) and reserves an
// address per router.
func newDurableMesh(t *testing.T, ctx context.Context, extra []string, topology map[string][]string, hosts ...string) *durableMesh {
	t.Helper()
	dir := t.TempDir()
	m := &durableMesh{t: t, ctx: ctx, dir: dir, certDir: filepath.Join(dir, "certs"), nodes: map[string]*meshNode{}, extra: extra}
	certArgs := []string{"certs", "init", m.certDir}
	for _, h := range hosts {
		certArgs = append(certArgs, "--host", h)
	}
	if out, err := runBin(t, ctx, nil, "sift", certArgs...); err != nil {
		t.Fatalf("certs init: %v\n%s", err, out)
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range topology {
			if !yield(n) {
				return
			}
		}
	}) {
		m.nodes[name] = &meshNode{name: name, addr: freeUDPAddr(t), peers: topology[name]}
		m.order = append(m.order, name)
	}
	return m
}

// args are the siftd flags of router n.
func (m *durableMesh) args(n *meshNode) []string {
	listen, metrics := n.addr, "127.0.0.1:0"
	if n.listen != "" {
		listen = n.listen
	}
	if n.metricsHost != "" {
		metrics = "0.0.0.0:0"
	}
	args := []string{"--name", n.name, "--listen", listen, "--certs", m.certDir,
		"--data", filepath.Join(m.dir, n.name), "--metrics", metrics}
	for _, p := range n.peers {
		args = append(args, "--peer", m.nodes[p].addr)
	}
	for _, a := range n.peerAddrs {
		args = append(args, "--peer", a)
	}
	args = append(args, n.flags...)
	if !m.noFlags {
		args = append(args, "--pubend", "phb=phb")
		for _, name := range m.order {
			args = append(args, "--member", name)
		}
	}
	return append(args, m.extra...)
}

// start runs router name and waits for its "router ready" line; with
// links, it also waits for a "link up" per peer.
func (m *durableMesh) start(name string, links int) {
	m.t.Helper()
	n := m.nodes[name]
	p := startProcIn(m.t, m.ctx, n.ns, "siftd", m.args(n)...)
	n.metrics = n.metricsAddr(p.waitLine(m.t, m.ctx, metricsRE)[1])
	p.waitLine(m.t, m.ctx, readyRE)
	for range links {
		p.waitLine(m.t, m.ctx, linkUpRE)
	}
	n.proc = background(name, p)
	n.starts++
}

// startAll starts every router, peers first, and waits until every link
// is up on both sides.
func (m *durableMesh) startAll() {
	m.t.Helper()
	degree := map[string]int{}
	for _, n := range m.nodes {
		for _, p := range n.peers {
			degree[n.name]++
			degree[p]++
		}
	}
	// Start without waiting for links, then wait for each side's links.
	procs := map[string]*proc{}
	for _, name := range m.order {
		n := m.nodes[name]
		p := startProcIn(m.t, m.ctx, n.ns, "siftd", m.args(n)...)
		n.metrics = n.metricsAddr(p.waitLine(m.t, m.ctx, metricsRE)[1])
		p.waitLine(m.t, m.ctx, readyRE)
		procs[name] = p
	}
	for _, name := range m.order {
		for range degree[name] {
			procs[name].waitLine(m.t, m.ctx, linkUpRE)
		}
		m.nodes[name].proc = background(name, procs[name])
		m.nodes[name].starts++
	}
}

// metricsAddr is where the metrics a router logged it listens on are
// fetched: on metricsHost when it is set.
func (n *meshNode) metricsAddr(logged string) string {
	if n.metricsHost == "" {
		return logged
	}
	_, port, err := net.SplitHostPort(logged)
	if err != nil {
		return logged
	}
	return net.JoinHostPort(n.metricsHost, port)
}

// crash SIGKILLs router name and restarts it on the same address and data
// folder, after down.
func (m *durableMesh) crash(name string, down time.Duration) {
	m.t.Helper()
	m.nodes[name].proc.kill()
	time.Sleep(down)
	m.start(name, 0)
}

// stopAll stops every router with SIGTERM.
func (m *durableMesh) stopAll() {
	for _, name := range m.order {
		if n := m.nodes[name]; n.proc != nil && !n.proc.exited() {
			n.proc.stop()
		}
	}
}

// logs returns every router's /debug/durable and last stderr lines, for
// failure messages.
func (m *durableMesh) logs() string {
	var b strings.Builder
	for _, name := range m.order {
		if n := m.nodes[name]; n.proc != nil && !n.proc.exited() {
			fmt.Fprintf(&b, "--- %s /debug/durable: %s\n", name, m.debugDurable(name))
			fmt.Fprintf(&b, "--- %s durable metrics: %s\n", name, m.durableMetrics(name))
		}
	}
	for _, name := range m.order {
		lines := strings.Split(m.nodes[name].proc.stderr(), "\n")
		fmt.Fprintf(&b, "--- %s (started %d times), last lines:\n%s\n", name, m.nodes[name].starts, strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
	return b.String()
}

// debugDurable returns router name's /debug/durable, or why not.
func (m *durableMesh) debugDurable(name string) string {
	body, err := m.fetch(name, "/debug/durable")
	if err != nil {
		return err.Error()
	}
	return strings.Join(strings.Fields(body), " ")
}

// durableMetrics returns router name's sift_durable_* counters and
// gauges from /metrics, on one line, or why not.
func (m *durableMesh) durableMetrics(name string) string {
	body, err := m.fetch(name, "/metrics")
	if err != nil {
		return err.Error()
	}
	var keep []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "sift_durable_") && !strings.Contains(line, "_bucket") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "; ")
}

// fetch returns path from router name's metrics address.
func (m *durableMesh) fetch(name, path string) (string, error) {
	resp, err := m.http().Get("http://" + m.nodes[name].metrics + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// waitAcked waits until router name's SHB has recorded an acknowledgement
// of subscriber id up to tick on pubend (/debug/durable), or the
// deadline; it returns the tick recorded.
func (m *durableMesh) waitAcked(ctx context.Context, name, id, pubend string, tick durable.Tick, deadline time.Duration) durable.Tick {
	end := time.Now().Add(deadline)
	for {
		var got durable.Tick
		if resp, err := m.http().Get("http://" + m.nodes[name].metrics + "/debug/durable"); err == nil {
			var st struct {
				Subscribers []struct {
					ID    string     `json:"id"`
					Acked durable.CT `json:"acked"`
				} `json:"subscribers"`
			}
			if json.NewDecoder(resp.Body).Decode(&st) == nil {
				for _, sub := range st.Subscribers {
					if sub.ID == id {
						got = sub.Acked[pubend]
					}
				}
			}
			resp.Body.Close()
		}
		if got >= tick || time.Now().After(end) || ctx.Err() != nil {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// released returns the L prefix of pubend at its host router name, from
// /debug/durable: every tick up to it is released.
func (m *durableMesh) released(name, pubend string) (durable.Tick, error) {
	resp, err := m.http().Get("http://" + m.nodes[name].metrics + "/debug/durable")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st struct {
		Pubends []struct {
			Pubend   string       `json:"pubend"`
			Released durable.Tick `json:"released"`
		} `json:"pubends"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, fmt.Errorf("/debug/durable of %s: %w", name, err)
	}
	for _, p := range st.Pubends {
		if p.Pubend == pubend {
			return p.Released, nil
		}
	}
	return 0, fmt.Errorf("/debug/durable of %s lists no pubend %s", name, pubend)
}

// durableSub is one durable subscriber: an id, a filter, a log file and
// the router it is attached to; its process comes and goes.
type durableSub struct {
	id, filter string
	file       string
	at         string // router name
	proc       *bgProc
	starts     int
	parsed     match.Filter
}

// startSub runs `sift sub --durable` for s at its router and waits for
// "ready".
func (m *durableMesh) startSub(s *durableSub) {
	m.t.Helper()
	p := startProcIn(m.t, m.ctx, m.clientNS, "sift", "sub", "--durable", s.id, "--out", s.file,
		"--router", m.nodes[s.at].addr, "--certs", m.certDir, "--dial-timeout", "60s", s.filter)
	p.waitLine(m.t, m.ctx, subReady)
	s.proc = background("sub "+s.id, p)
	s.starts++
}

// startSubs starts subs and, when the test ends, kills those still
// running.
func (m *durableMesh) startSubs(subs []*durableSub) {
	m.t.Helper()
	for _, s := range subs {
		m.startSub(s)
	}
	m.t.Cleanup(func() {
		for _, s := range subs {
			if !s.proc.exited() {
				s.proc.kill()
			}
		}
	})
}

// newSub prepares subscriber id at router at (not started).
func (m *durableMesh) newSub(id, filter, at string) *durableSub {
	return &durableSub{id: id, filter: filter, file: filepath.Join(m.dir, id+".jsonl"), at: at, parsed: match.MustParse(filter)}
}

// seqEvents makes n trade-like events; event i carries seq i+1.
func seqEvents(n int, seed uint64) []match.Event {
	r := rand.New(rand.NewPCG(seed, 9))
	sides := []string{"buy", "sell"}
	venues := []string{"NASDAQ", "NYSE", "EDGX", "BATS"}
	out := make([]match.Event, n)
	for i := range out {
		out[i] = match.MustEvent(
			match.Attr{Name: "seq", Value: match.Int(int64(i + 1))},
			match.Attr{Name: "side", Value: match.Str(sides[r.IntN(2)])},
			match.Attr{Name: "venue", Value: match.Str(venues[r.IntN(4)])},
			match.Attr{Name: "volume", Value: match.Int(int64(100 * (1 + r.IntN(100))))},
			match.Attr{Name: "price", Value: match.MustFloat(float64(r.IntN(100000)) / 100)},
		)
	}
	return out
}

// writeEvents writes events as JSON Lines to a new file in dir.
func writeEvents(t *testing.T, dir string, events []match.Event) string {
	t.Helper()
	var buf bytes.Buffer
	if err := match.WriteEvents(&buf, events); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// logEvent is one event line of a subscriber log.
type logEvent struct {
	pubend string
	tick   durable.Tick
	seq    int64
	event  match.Event
}

// subLog is what a subscriber's log file holds.
type subLog struct {
	events []logEvent
	gaps   []sublog.Entry
}

// readSubLog reads a finished log: it must parse, have no torn tail, and
// (sublog.Read checks this) strictly increasing ticks per pubend.
func readSubLog(path string) (subLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return subLog{}, err
	}
	defer f.Close()
	c, err := sublog.Read(f)
	if err != nil {
		return subLog{}, err
	}
	if c.Torn > 0 {
		return subLog{}, fmt.Errorf("%s ends with a torn line of %d bytes", path, c.Torn)
	}
	var l subLog
	for _, e := range c.Entries {
		switch e.Kind {
		case sublog.KindEvent:
			v, ok := e.Event.Get("seq")
			if !ok || v.Kind() != match.KindInt {
				return subLog{}, fmt.Errorf("%s: event %v has no integer seq", path, e.Event)
			}
			l.events = append(l.events, logEvent{e.Pubend, e.Tick, v.AsInt(), e.Event})
		case sublog.KindGap:
			l.gaps = append(l.gaps, e)
		}
	}
	return l, nil
}

// countEvents returns how many events a (possibly growing) log holds.
func countEvents(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	c, err := sublog.Read(f)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range c.Entries {
		if e.Kind == sublog.KindEvent {
			n++
		}
	}
	return n
}

// tickOf maps a sequence number to the pubend and tick it was logged at.
type tickOf map[int64]logEvent

// logCheck is the verdict on one subscriber's log.
type logCheck struct {
	events, want, missing, gaps int
	gapTicks                    int64
}

func (c logCheck) String() string {
	return fmt.Sprintf("%d of %d matching events, %d missing, %d gaps over %d ticks", c.events, c.want, c.missing, c.gaps, c.gapTicks)
}

// checkSubLog verifies a subscriber's log against the published events
// (event i has seq i+1) and the filter, with match.Scan as the reference:
//   - every logged event is the published event with its seq, and matches;
//   - seqs strictly increase (one publisher: tick order is publish order),
//     so nothing is logged twice;
//   - without gaps allowed: no gap line, and every matching event is there;
//   - with gaps allowed: a matching event is missing only if its tick (from
//     ticks, another subscriber's complete log) lies inside a gap of its
//     pubend, no gap ends above maxGapTick, and no event lies in a gap.
func checkSubLog(path string, filter match.Filter, published []match.Event, allowGaps bool, ticks tickOf, maxGapTick durable.Tick) (logCheck, error) {
	l, err := readSubLog(path)
	if err != nil {
		return logCheck{}, err
	}
	scan := match.NewScan()
	scan.Insert(1, filter)
	want := matchingSeqs(filter, published)
	res := logCheck{events: len(l.events), want: len(want), gaps: len(l.gaps)}
	got := map[int64]bool{}
	var last int64
	for i, e := range l.events {
		if e.seq < 1 || e.seq > int64(len(published)) || !e.event.Equal(published[e.seq-1]) {
			return res, fmt.Errorf("line for event %d (tick %d): %v is not published event seq %d", i+1, e.tick, e.event, e.seq)
		}
		if len(scan.Match(e.event, nil)) == 0 {
			return res, fmt.Errorf("event seq %d does not match %s", e.seq, filter)
		}
		if e.seq <= last {
			return res, fmt.Errorf("event seq %d (tick %d) logged after seq %d: a duplicate or out of order", e.seq, e.tick, last)
		}
		last = e.seq
		got[e.seq] = true
	}
	var missing []int64
	for _, s := range want {
		if !got[s] {
			missing = append(missing, s)
		}
	}
	res.missing = len(missing)
	for _, g := range l.gaps {
		res.gapTicks += int64(g.Gap.To - g.Gap.From + 1)
	}
	if !allowGaps {
		if len(l.gaps) > 0 {
			return res, fmt.Errorf("gap %v without early release", l.gaps[0])
		}
		if len(missing) > 0 {
			return res, fmt.Errorf("%d matching events missing, the first seqs %v", len(missing), missing[:min(len(missing), 10)])
		}
		return res, nil
	}
	for _, g := range l.gaps {
		if g.Gap.To > maxGapTick {
			return res, fmt.Errorf("gap %v ends above %d, a tick too recent to be released", g, maxGapTick)
		}
	}
	for _, s := range missing {
		at, ok := ticks[s]
		if !ok {
			return res, fmt.Errorf("missing seq %d, and its tick is unknown", s)
		}
		if !slices.ContainsFunc(l.gaps, func(g sublog.Entry) bool { return g.Pubend == at.pubend && g.Gap.Contains(at.tick) }) {
			return res, fmt.Errorf("missing seq %d (tick %d of %s) lies in no gap", s, at.tick, at.pubend)
		}
	}
	return res, nil
}

// ticksOf maps every event of a complete log to its tick.
func ticksOf(path string) (tickOf, error) {
	l, err := readSubLog(path)
	if err != nil {
		return nil, err
	}
	m := tickOf{}
	for _, e := range l.events {
		m[e.seq] = e
	}
	return m, nil
}

// waitLogs waits until each subscriber's log holds want[i] events, or
// the deadline; it returns the counts reached.
func waitLogs(ctx context.Context, subs []*durableSub, want []int, deadline time.Duration) []int {
	end := time.Now().Add(deadline)
	got := make([]int, len(subs))
	for {
		done := true
		for i, s := range subs {
			got[i] = countEvents(s.file)
			done = done && got[i] >= want[i]
		}
		if done || time.Now().After(end) || ctx.Err() != nil {
			return got
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// matchingSeqs returns the seqs of the published events (event i has seq
// i+1) that match filter, by match.Scan.
func matchingSeqs(filter match.Filter, published []match.Event) []int64 {
	scan := match.NewScan()
	scan.Insert(1, filter)
	var seqs []int64
	for i, e := range published {
		if len(scan.Match(e, nil)) > 0 {
			seqs = append(seqs, int64(i+1))
		}
	}
	return seqs
}

// waitCT waits until the checkpoint of pubend in a (growing) log reaches
// tick, or the deadline; it returns the checkpoint reached.
func waitCT(ctx context.Context, path, pubend string, tick durable.Tick, deadline time.Duration) durable.Tick {
	end := time.Now().Add(deadline)
	for {
		var ct durable.Tick
		if f, err := os.Open(path); err == nil {
			c, err := sublog.Read(f)
			f.Close()
			if err == nil {
				ct = c.CT[pubend]
			}
		}
		if ct >= tick || time.Now().After(end) || ctx.Err() != nil {
			return ct
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestCheckSubLog: the checker of the kill tests catches each kind of
// wrong log (and accepts the right ones), on hand-written logs.
func TestCheckSubLog(t *testing.T) {
	published := seqEvents(6, 3)
	all := match.MustParse(`seq >= 1`)
	line := func(seq int, tick durable.Tick) sublog.Entry {
		return sublog.Entry{Kind: sublog.KindEvent, Pubend: "p", Tick: tick, Event: published[seq-1]}
	}
	gap := func(from, to durable.Tick) sublog.Entry {
		return sublog.Entry{Kind: sublog.KindGap, Pubend: "p", Gap: durable.Range{From: from, To: to}}
	}
	ticks := tickOf{}
	for i := range published {
		ticks[int64(i+1)] = logEvent{pubend: "p", tick: durable.Tick(10 * (i + 1)), seq: int64(i + 1)}
	}
	complete := []sublog.Entry{line(1, 10), line(2, 20), line(3, 30), line(4, 40), line(5, 50), line(6, 60)}
	for _, tc := range []struct {
		name      string
		lines     []sublog.Entry
		raw       string // appended after the lines
		allowGaps bool
		maxGap    durable.Tick
		want      string // "" for a pass
	}{
		{name: "complete", lines: complete},
		{name: "missing", lines: []sublog.Entry{line(1, 10), line(3, 30), line(4, 40), line(5, 50), line(6, 60)}, want: "1 matching events missing, the first seqs [2]"},
		{name: "duplicate at a new tick", lines: []sublog.Entry{line(1, 10), line(2, 20), line(2, 25)}, want: "seq 2 (tick 25) logged after seq 2"},
		{name: "wrong content", lines: []sublog.Entry{line(1, 10), {Kind: sublog.KindEvent, Pubend: "p", Tick: 20, Event: match.MustEvent(match.Attr{Name: "seq", Value: match.Int(2)})}}, want: "is not published event seq 2"},
		{name: "torn", lines: complete, raw: `{"pubend":"p"`, want: "torn line"},
		{name: "tick repeated", lines: complete[:2], raw: string(sublog.AppendLine(nil, line(3, 20))), want: "not above the checkpoint"},
		{name: "gap refused", lines: []sublog.Entry{line(1, 10), gap(11, 25), line(3, 30), line(4, 40), line(5, 50), line(6, 60)}, want: "without early release"},
		{name: "gap allowed", lines: []sublog.Entry{line(1, 10), gap(11, 25), line(3, 30), line(4, 40), line(5, 50), line(6, 60)}, allowGaps: true, maxGap: 25},
		{name: "gap too recent", lines: []sublog.Entry{line(1, 10), gap(11, 25), line(3, 30), line(4, 40), line(5, 50), line(6, 60)}, allowGaps: true, maxGap: 24, want: "too recent"},
		{name: "missing outside the gap", lines: []sublog.Entry{line(1, 10), gap(11, 15), line(3, 30), line(4, 40), line(5, 50), line(6, 60)}, allowGaps: true, maxGap: 100, want: "seq 2 (tick 20 of p) lies in no gap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := mustWrite(t, tc.lines)
			if f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0); err == nil {
				f.WriteString(tc.raw)
				f.Close()
			}
			_, err := checkSubLog(path, all, published, tc.allowGaps, ticks, tc.maxGap)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("a right log refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("checkSubLog = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := checkSubLog(mustWrite(t, complete), match.MustParse(`seq >= 2`), published, false, nil, 0); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("an event outside the filter: %v", err)
	}
}

// mustWrite writes a log of the entries to a new file.
func mustWrite(t *testing.T, es []sublog.Entry) string {
	t.Helper()
	var b []byte
	for _, e := range es {
		b = sublog.AppendLine(b, e)
	}
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// finishOneSub waits for the durable publisher pub to succeed and for
// sub's log to hold every event of events it matches, stops sub, and
// checks its log: each matching event once, in order, no gap. It fails
// the test (with every router's view) otherwise and returns the check.
func (m *durableMesh) finishOneSub(ctx context.Context, pub *bgProc, sub *durableSub, events []match.Event) logCheck {
	t := m.t
	t.Helper()
	err := pub.wait()
	if out := pub.p.stdout.String(); err != nil || !publishedRE.MatchString(out) {
		t.Fatalf("durable pub: %v\n%s\n%s\n%s", err, out, pub.stderr(), m.logs())
	}
	want := len(matchingSeqs(sub.parsed, events))
	if got := waitLogs(ctx, []*durableSub{sub}, []int{want}, 60*time.Second); got[0] != want {
		t.Logf("sub %s logged %d of %d events", sub.id, got[0], want)
	}
	if err := sub.proc.stop(); err != nil {
		t.Errorf("sub %s after SIGTERM: %v\n%s", sub.id, err, sub.proc.stderr())
	}
	c, err := checkSubLog(sub.file, sub.parsed, events, false, nil, 0)
	if err != nil {
		t.Fatalf("sub %s: %s: %v\n%s", sub.id, c, err, m.logs())
	}
	return c
}
