package main

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// TestCycleRefused: three siftd processes a, b, c where c dials b and a,
// and a dials b. c links to b while a is not there; then a starts and
// links to b, giving the chain a - b - c, and c's next dial of a would
// close a cycle: a refuses it, and both a and c log "link refused" naming
// the cycle. Then subscribers matching every event at a, b and c each get
// every event published at a and at c exactly once (were the link
// accepted, every event would circle the triangle for ever).
//
// The order is made certain, without sleeps, by c's redial backoff: until
// then a's address is held by an impostor siftd of another deployment,
// which c's dials fail against at once (TLS), so the backoff grows; the
// real a starts only once c has logged that its next dial of a is at
// least redialMargin away, while a links to b within milliseconds of being
// ready (on a loaded machine a took long enough to get ready that a margin
// of one second let c's dial land first, and a's link to b was refused).
func TestCycleRefused(t *testing.T) {
	const redialMargin = 4 * time.Second
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newCluster(t, ctx, nil)
	other := filepath.Join(c.dir, "other-certs")
	initCerts(t, ctx, other)
	impostor := startLogProc(t, ctx, "impostor", nil, "siftd", "--name", "a", "--listen", "127.0.0.1:0",
		"--certs", other, "--data", filepath.Join(c.dir, "impostor"))
	a := &node{name: "a", listen: impostor.waitLine(t, ctx, readyRE)[1]}
	a.addr = a.listen
	b := c.start("b")
	cc := c.start("c", b, a)
	c.waitLinks(cc, b)
	c.waitLinks(b, cc)
	redial := regexp.MustCompile(`msg="redialling peer".* addr=` + regexp.QuoteMeta(a.addr) + ` in=(\S+)`)
	for {
		m := cc.p.waitLine(t, ctx, redial)
		if d, err := time.ParseDuration(m[1]); err == nil && d >= redialMargin {
			break
		}
	}
	if err := impostor.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("impostor after SIGTERM: %v", err)
	}
	a.peers = []string{b.addr}
	c.startNode(a)
	c.waitLinks(a, b)
	c.waitLinks(b, a)
	refusedAtA := a.p.waitLine(t, ctx, regexp.MustCompile(`msg="link refused".* link=c .*cycle: c reaches this router \(a\).*`))
	refusedAtC := cc.p.waitLine(t, ctx, regexp.MustCompile(`msg="link refused".* addr=`+regexp.QuoteMeta(a.addr)+`.*cycle.*`))
	t.Logf("a: %s", refusedAtA[0])
	t.Logf("c: %s", refusedAtC[0])
	for n, want := range map[*node][]string{a: {"b"}, b: {"a", "c"}, cc: {"b"}} {
		r, err := n.routes()
		if err != nil {
			t.Fatal(err)
		}
		if got := r.peers(); !slices.Equal(got, want) {
			t.Errorf("%s is linked to %v, want %v", n.name, got, want)
		}
	}

	w, err := workload.Stock(workload.StockConfig{Subscriptions: 1, Events: 600}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var subs []*subscriber
	for _, n := range []*node{a, b, cc} {
		subs = append(subs, c.subscribe("all", n, match.MustParse(match.MatchAllText)))
	}
	pubs := []*publisher{{name: "pa", at: a}, {name: "pc", at: cc}}
	publishAll(t, ctx, c, "chain", map[*publisher][]match.Event{pubs[0]: w.Events[:300], pubs[1]: w.Events[300:]})
	always := func(*subscriber, *publisher, string) bool { return true }
	waitPhase(t, ctx, subs, pubs, always)
	for _, s := range subs {
		s.p.kill()
		rep, err := checkDelivery(s, pubs, always)
		if err != nil {
			t.Error(err)
		}
		t.Logf("%s at %s: got/published %v", s.name, s.at.name, rep)
	}
	c.stopAll()
}
