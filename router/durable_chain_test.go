package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// durableChain is three routers a - b - c over QUIC on fixed addresses
// and data folders, so each can be stopped and started again as the same
// router: a hosts pubend "a", every router is a member.
type durableChain struct {
	t       *testing.T
	certDir string
	dirs    map[string]string
	addrs   map[string]string
	peers   map[string][]string
	envs    map[string]*local.Env
	rec     durableLogRec
}

// durableLogRec keeps the durable side's log lines, for failures.
type durableLogRec struct {
	mu    sync.Mutex
	lines []string
}

// teeLog feeds a linkWatch and records durable log lines.
type teeLog struct {
	w    *linkWatch
	rec  *durableLogRec
	pref string
}

func (h *teeLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *teeLog) WithAttrs(as []slog.Attr) slog.Handler {
	p := h.pref
	for _, a := range as {
		p += a.String() + " "
	}
	return &teeLog{w: h.w, rec: h.rec, pref: p}
}
func (h *teeLog) WithGroup(string) slog.Handler { return h }
func (h *teeLog) Handle(ctx context.Context, r slog.Record) error {
	h.w.Handle(ctx, r)
	if strings.Contains(r.Message, "durable") || strings.Contains(r.Message, "link") || strings.Contains(r.Message, "redial") {
		line := h.pref + r.Message
		r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
		h.rec.mu.Lock()
		h.rec.lines = append(h.rec.lines, line)
		h.rec.mu.Unlock()
	}
	return nil
}

func newDurableChain(t *testing.T) *durableChain {
	ch := &durableChain{t: t, certDir: deploymentCerts(t), dirs: map[string]string{}, addrs: map[string]string{},
		peers: map[string][]string{"a": nil, "b": {"a"}, "c": {"b"}}, envs: map[string]*local.Env{}}
	base := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		ch.dirs[n] = filepath.Join(base, n)
		ch.addrs[n] = freeUDPAddr(t)
	}
	for _, n := range []string{"a", "b", "c"} {
		ch.start(n)
	}
	t.Cleanup(func() {
		for _, env := range ch.envs {
			env.Stop()
		}
	})
	return ch
}

// start runs router n (again) and waits for its links to come up.
func (ch *durableChain) start(n string) {
	ch.t.Helper()
	w := newLinkWatch()
	var peers []string
	for _, p := range ch.peers[n] {
		peers = append(peers, ch.addrs[p])
	}
	env, err := local.StartIn(ch.certDir, ch.dirs[n], chain(linkedRouter(ch.t, n, ch.certDir, ch.addrs[n], w, peers...),
		durableOn(map[string]string{"a": "a"}, "a", "b", "c"), func(c *router.Config) {
			c.Logger = slog.New(&teeLog{w: w, rec: &ch.rec})
		}))
	if err != nil {
		ch.t.Fatalf("start %s: %v", n, err)
	}
	ch.envs[n] = env
	for range peers {
		w.waitUp(ch.t)
	}
}

// status renders every router's durable status, for failures.
func (ch *durableChain) status() string {
	var b strings.Builder
	for _, n := range []string{"a", "b", "c"} {
		if env := ch.envs[n]; env != nil {
			st, _ := env.Router.Durable(context.Background())
			js, _ := json.Marshal(st)
			fmt.Fprintf(&b, "%s: %s\n", n, js)
		}
	}
	ch.rec.mu.Lock()
	defer ch.rec.mu.Unlock()
	for i, l := range ch.rec.lines {
		if i > 200 {
			break
		}
		fmt.Fprintln(&b, l)
	}
	return b.String()
}

// restart stops router n and starts it again on the same address and
// data.
func (ch *durableChain) restart(n string) {
	ch.t.Helper()
	env := ch.envs[n]
	delete(ch.envs, n)
	if err := env.Stop(); err != nil {
		ch.t.Fatalf("stop %s: %v", n, err)
	}
	time.Sleep(50 * time.Millisecond)
	ch.start(n)
}

// TestDurableChainRestarts: pubend a at router a, durable subscribers at
// c (two hops away) and at b; while events are published, b, c and a are
// stopped and started again in turn. Each subscriber gets every matching
// event exactly once, in order.
func TestDurableChainRestarts(t *testing.T) {
	ch := newDurableChain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	filters := map[string]string{"c": `symbol prefix "S"`, "b": `price < 50`}
	readers := map[string]*durableReader{}
	for n, f := range filters {
		s, err := client.DurableSubscribe(ctx, client.DurableSubscribeOptions{
			DurableOptions: durableOpts(ch.envs[n], ch.addrs[n]), ID: "sub-" + n, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		readers[n] = newDurableReader(t, s)
	}
	pub, err := client.NewDurablePublisher(ctx, client.DurablePublisherOptions{
		DurableOptions: durableOpts(ch.envs["a"], ch.addrs["a"]), Pubend: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	evs := stockEvents(11, 1500)
	published := make(chan error, 1)
	go func() { published <- publishPaced(ctx, pub, evs) }()
	for _, n := range []string{"b", "c", "a"} {
		time.Sleep(150 * time.Millisecond)
		ch.restart(n)
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	for n, f := range filters {
		want := expected(f, evs)
		r := readers[n]
		if err := r.until(ctx, func() bool { return len(r.events) >= len(want) }); err != nil {
			t.Fatalf("subscriber at %s: %v (want %d events; CT %v)\n%s", n, err, len(want), r.ct, ch.status())
		}
		if err := sameEvents(r.events, want); err != nil {
			t.Fatalf("subscriber at %s: %v", n, err)
		}
		t.Logf("subscriber at %s: %d events, exactly once", n, len(r.events))
	}
}

// publishPaced publishes evs in small bursts, so that restarts land while
// events flow, and waits until all are logged.
func publishPaced(ctx context.Context, pub *client.DurablePublisher, evs []match.Event) error {
	for i, e := range evs {
		if _, err := pub.Publish(ctx, e); err != nil {
			return err
		}
		if i%50 == 49 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return pub.Flush(ctx)
}

var _ router.DurableConfig
