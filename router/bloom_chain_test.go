package router_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// The subscriptions of the Bloom chain test, per router. b's `price < 100`
// covers c's IBM filter, so b forwards only its own filter to a: a learns
// the IBM filter's terms only from the dictionary flood (the false-negative
// trap of docs/protocol.md, "Bloom forwarding"). a's unqualified bounds make summaries fuller, so
// that small summaries collide or saturate.
var bloomChainFilters = map[string][]string{
	"c": {
		`symbol == "IBM" && price < 50 && exchange prefix "NY"`,
		`symbol == "SAP" && volume >= 9000`,
		`exchange == "XETRA" && price > 190`,
	},
	"b": {
		`price < 100`,
		`symbol == "MSFT" && volume < 500`,
	},
	"a": {
		`symbol == "ORCL" && price > 150`,
		`seq < 0`,
		`volume > 1000`, `volume > 3000`, `volume > 5000`, `volume > 7000`,
		`price > 20`, `price > 60`, `price > 120`,
	},
}

// chainRun is what one run of the chain observed.
type chainRun struct {
	got       map[string][][]match.Event // router -> per filter
	bIn, cIn  float64                    // events received by b from a, c from b
	cFalse    float64                    // c's false forwards from b
	bFalse    float64                    // b's false forwards from a
	summaries float64                    // at a
	saturated float64                    // at a
	bWalks    float64                    // b's links decided by a tree walk
	bWitness  float64                    // b's links decided by the witness
	dictTerms [3]float64                 // a, b, c
	wantTerms int
	published int
}

// runBloomChain links a - b - c (c dials b, b dials a) with mod applied to
// every router (given its name), subscribes bloomChainFilters (each Subscribe returns once
// installed on every router), publishes stock events and a marker at a,
// and collects what every subscriber got.
func runBloomChain(t *testing.T, mod func(name string, c *router.Config)) chainRun {
	t.Helper()
	certDir := deploymentCerts(t)
	both := func(name string, w *linkWatch, peers ...string) func(*router.Config) {
		base := linkedRouter(t, name, certDir, "", w, peers...)
		return func(c *router.Config) { base(c); mod(name, c) }
	}
	wa, wb, wc := newLinkWatch(), newLinkWatch(), newLinkWatch()
	envs := map[string]*local.Env{}
	envs["a"] = startAt(t, t.TempDir(), certDir, both("a", wa))
	defer envs["a"].Stop()
	envs["b"] = startAt(t, t.TempDir(), certDir, both("b", wb, envs["a"].Addr))
	defer envs["b"].Stop()
	envs["c"] = startAt(t, t.TempDir(), certDir, both("c", wc, envs["b"].Addr))
	defer envs["c"].Stop()
	wa.waitUp(t)
	wb.waitUp(t)
	wb.waitUp(t)
	wc.waitUp(t)

	subs := map[string][]*client.Subscription{}
	terms := map[string]bool{}
	for _, name := range []string{"c", "b", "a"} {
		cl := dial(t, envs[name], "sub-"+name, client.Options{})
		for _, f := range bloomChainFilters[name] {
			s, err := cl.Subscribe(testCtx(t), f)
			if err != nil {
				t.Fatal(err)
			}
			subs[name] = append(subs[name], s)
			for _, term := range (bloom.Params{}).Terms(match.MustParse(f)) {
				terms[term.String()] = true
			}
		}
	}
	run := chainRun{got: map[string][][]match.Event{}, wantTerms: len(terms)}
	// Every Subscribe returned, so every term is at every router.
	for i, name := range []string{"a", "b", "c"} {
		run.dictTerms[i] = metricValue(envs[name].Router.Metrics().Bloom.DictionaryTerms)
	}
	evs := append(stockEvents(11, 3000), bloomMarker())
	run.published = len(evs)
	pub := dial(t, envs["a"], "pub", client.Options{})
	if err := pub.Publish(testCtx(t), evs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	// Read every subscription at once: a subscription nobody reads would
	// hold up its connection's stream.
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for name, fs := range bloomChainFilters {
		run.got[name] = make([][]match.Event, len(fs)) // before any reader runs: they index the map
	}
	for name, fs := range bloomChainFilters {
		for i, f := range fs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := collectErr(testCtx(t), subs[name][i], len(expected(f, evs)))
				run.got[name][i] = got
				if err != nil {
					errs <- fmt.Errorf("subscriber at %s: %w", name, err)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	la, lb, lc := envs["a"].Router.Metrics(), envs["b"].Router.Metrics(), envs["c"].Router.Metrics()
	run.bIn = metricValue(lb.LinkEvents.WithLabelValues("a", "in"))
	run.cIn = metricValue(lc.LinkEvents.WithLabelValues("b", "in"))
	run.bFalse = metricValue(lb.Bloom.FalseForwards.WithLabelValues("a"))
	run.cFalse = metricValue(lc.Bloom.FalseForwards.WithLabelValues("b"))
	run.summaries = metricValue(la.Bloom.Summaries)
	run.saturated = metricValue(la.Bloom.Saturated)
	run.bWalks = metricValue(lb.Bloom.TreeWalks)
	run.bWitness = metricValue(lb.Bloom.WitnessDecisions)
	return run
}

// bloomMarker is published last; it matches a subscription of each router
// (c's IBM filter, b's price filter, a's seq filter), so each subscriber
// connection's stream ends with it.
func bloomMarker() match.Event {
	return match.MustEvent(
		match.Attr{Name: "seq", Value: match.Int(-1)},
		match.Attr{Name: "symbol", Value: match.Str("IBM")},
		match.Attr{Name: "price", Value: match.MustFloat(1)},
		match.Attr{Name: "volume", Value: match.Int(1)},
		match.Attr{Name: "exchange", Value: match.Str("NYSE")},
	)
}

// checkExact: every subscriber got exactly the events its filter matches,
// in publication order; the marker (last, matching c's IBM filter and b's
// price filter) proves nothing extra was still in flight for those.
func checkExact(t *testing.T, mode string, run chainRun) {
	t.Helper()
	evs := append(stockEvents(11, 3000), bloomMarker())
	for name, fs := range bloomChainFilters {
		for i, f := range fs {
			want := expected(f, evs)
			if err := sameEvents(run.got[name][i], want); err != nil {
				t.Fatalf("%s: subscriber at %s (%s): %v", mode, name, f, err)
			}
			if len(want) < 1 || (f != `seq < 0` && len(want) < 3) {
				t.Fatalf("%s: filter %s matches only %d events: weak test", mode, f, len(want))
			}
		}
	}
}

// TestBloomChain runs the chain in exact mode and in Bloom mode with each
// tree and with summaries small enough to saturate or to collide: every
// subscriber gets exactly its matching events in every run (the covered
// IBM subscription at c included: the false-negative trap); every
// router's dictionary holds every term once the subscriptions are
// acknowledged; the first router forwards exactly what exact mode does,
// summarizing only those events; further on Bloom mode forwards at least
// what exact mode does, and each extra event is counted as a false
// forward where it stopped.
func TestBloomChain(t *testing.T) {
	exact := runBloomChain(t, func(_ string, c *router.Config) { c.Forward = router.ForwardExact })
	checkExact(t, "exact", exact)
	for _, tc := range []struct {
		name   string
		index  string
		params bloom.Params
		v1     string // the router that links as version 1 (no witnesses)
		check  func(t *testing.T, run chainRun)
	}{
		{name: "sbstree", index: "sbstree", check: witnessed},
		{name: "bftree", index: "bftree", check: witnessed},
		// A router of version 1 among them: a's entries reach b
		// without witnesses, so b walks its tree for every link.
		{name: "b of version 1", v1: "b", check: func(t *testing.T, run chainRun) {
			noSaturation(t, run)
			if run.bWitness != 0 || run.bWalks < run.bIn {
				t.Fatalf("b decided %v links by witness and walked %v trees for %v events, from a version-1 link", run.bWitness, run.bWalks, run.bIn)
			}
		}},
		// c of version 1: b still decides by a's witnesses, and sends c
		// its entries without them (c would refuse them).
		{name: "c of version 1", v1: "c", check: witnessed},
		{name: "a of version 1", v1: "a", check: func(t *testing.T, run chainRun) {
			if run.bWitness != 0 {
				t.Fatalf("b decided %v links by witness from a version-1 router", run.bWitness)
			}
		}},
		// 64 bits and k = 24: an event satisfying two terms fills more
		// than half the summary and travels marked exact.
		{name: "saturated", params: bloom.Params{M: 64, K: 24}, check: func(t *testing.T, run chainRun) {
			if run.saturated == 0 || run.saturated == run.summaries {
				t.Fatalf("%v of %v summaries saturated: the test should mix both paths", run.saturated, run.summaries)
			}
		}},
		// 64 bits, k = 2, seed 2: terms collide (c's XETRA and IBM
		// filters among others) and events go where they match nothing.
		{name: "collisions", params: bloom.Params{M: 64, K: 2, Seed: 2}, check: func(t *testing.T, run chainRun) {
			if run.cFalse == 0 && run.bFalse == 0 {
				t.Fatal("no false forward with 64-bit summaries: the test should exercise them")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runBloomChain(t, func(name string, c *router.Config) {
				c.Forward, c.BloomIndex, c.Bloom = router.ForwardBloom, tc.index, tc.params
				if name == tc.v1 {
					c.LinkVersion = wire.Version
				}
			})
			checkExact(t, tc.name, run)
			for i, n := range run.dictTerms {
				if int(n) != run.wantTerms {
					t.Fatalf("router %c holds %v dictionary terms after every Subscribe returned, want %d", 'a'+i, n, run.wantTerms)
				}
			}
			// a, the first router, matches exactly: it sends b what exact
			// mode sends, and summarizes only those events.
			if run.bIn != exact.bIn || run.bFalse != 0 || run.summaries != exact.bIn || run.summaries >= float64(run.published) {
				t.Fatalf("b got %v events from a (exact mode %v, %v false); a computed %v summaries for %d published",
					run.bIn, exact.bIn, run.bFalse, run.summaries, run.published)
			}
			// c is a leaf: what b sent beyond exact mode matched nothing there.
			if run.cIn < exact.cIn || run.cFalse != run.cIn-exact.cIn {
				t.Fatalf("c got %v events from b (exact mode %v) and counted %v false forwards", run.cIn, exact.cIn, run.cFalse)
			}
			tc.check(t, run)
			t.Logf("%s: %v of %v summaries saturated; b got %v events from a (exact %v, %v false), c got %v from b (exact %v, %v false); b decided %v links by witness, %v by a walk",
				tc.name, run.saturated, run.summaries, run.bIn, exact.bIn, run.bFalse, run.cIn, exact.cIn, run.cFalse, run.bWitness, run.bWalks)
		})
	}
}

// witnessed: no saturation, and b decided some of its links by the
// witnesses a sent (the filters of c's that b forwarded to a uncovered),
// walking its tree for the others; every event b got had one link to
// decide (c's).
func witnessed(t *testing.T, run chainRun) {
	noSaturation(t, run)
	if run.bWitness == 0 || run.bWalks == 0 || run.bWitness+run.bWalks != run.bIn {
		t.Fatalf("b decided %v links by witness and %v by a walk for %v events received", run.bWitness, run.bWalks, run.bIn)
	}
}

func noSaturation(t *testing.T, run chainRun) {
	if run.saturated != 0 {
		t.Fatalf("%v summaries saturated with the default parameters", run.saturated)
	}
}

// refusalWatch records the reasons of "link refused" log lines.
type refusalWatch struct {
	*linkWatch
	mu      sync.Mutex
	reasons []string
}

func (w *refusalWatch) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "link refused" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				w.mu.Lock()
				w.reasons = append(w.reasons, a.Value.String())
				w.mu.Unlock()
			}
			return true
		})
	}
	return w.linkWatch.Handle(ctx, r)
}

func (w *refusalWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *refusalWatch) WithGroup(string) slog.Handler      { return w }

// TestBloomParamsRefused: routers whose Bloom parameters or forwarding
// modes differ refuse to link, both log "link refused" with both values,
// and no link comes up.
func TestBloomParamsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   func(*router.Config)
		reason string
	}{
		{"m differs", func(c *router.Config) { c.Forward = router.ForwardBloom },
			func(c *router.Config) { c.Forward = router.ForwardBloom; c.Bloom.M = 512 },
			"bloom parameters differ: this router has m=1024 k=3"},
		{"mode differs", func(c *router.Config) { c.Forward = router.ForwardExact },
			func(c *router.Config) { c.Forward = router.ForwardBloom },
			"forwarding modes differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared, err := local.Start(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			certDir := shared.CertsDir
			if err := shared.Stop(); err != nil {
				t.Fatal(err)
			}
			wa, wb := &refusalWatch{linkWatch: newLinkWatch()}, &refusalWatch{linkWatch: newLinkWatch()}
			modA := linkedRouter(t, "a", certDir, "", wa.linkWatch)
			a := startAt(t, t.TempDir(), certDir, func(c *router.Config) { modA(c); c.Logger = slog.New(wa); tc.a(c) })
			defer a.Stop()
			modB := linkedRouter(t, "b", certDir, "", wb.linkWatch, a.Addr)
			b := startAt(t, t.TempDir(), certDir, func(c *router.Config) { modB(c); c.Logger = slog.New(wb); tc.b(c) })
			defer b.Stop()
			for _, w := range []*refusalWatch{wa, wb} {
				select {
				case <-w.refused:
				case <-testCtx(t).Done():
					t.Fatal("no link refused")
				}
				select {
				case <-w.up:
					t.Fatal("a link came up")
				default:
				}
			}
			wa.mu.Lock()
			defer wa.mu.Unlock()
			if len(wa.reasons) == 0 || !strings.Contains(wa.reasons[0], tc.reason) {
				t.Fatalf("a refused with %q, want %q", wa.reasons, tc.reason)
			}
			t.Logf("a: %s", wa.reasons[0])
		})
	}
}

// TestBloomResync: the dictionaries resynchronise when a link comes back.
// b dials a; when a is replaced by a new router on the same address with
// other subscriptions, b forgets the old a's terms, both sides exchange
// snapshots, and an event published at the new a reaches b's subscriber
// on a summary built from the terms b sent in its snapshot.
func TestBloomResync(t *testing.T) {
	shared, err := local.Start(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	certDir := shared.CertsDir
	if err := shared.Stop(); err != nil {
		t.Fatal(err)
	}
	bloomMode := func(base func(*router.Config)) func(*router.Config) {
		return func(c *router.Config) { base(c); c.Forward = router.ForwardBloom }
	}
	addrA := freeUDPAddr(t)
	wa, wb := newLinkWatch(), newLinkWatch()
	b := startAt(t, t.TempDir(), certDir, bloomMode(linkedRouter(t, "b", certDir, "", wb, addrA)))
	defer b.Stop()
	ibm, err := dial(t, b, "cb", client.Options{}).Subscribe(testCtx(t), `symbol == "IBM" && price < 50`)
	if err != nil {
		t.Fatal(err)
	}
	terms := func(env *local.Env) float64 { return metricValue(env.Router.Metrics().Bloom.DictionaryTerms) }

	a := startAt(t, t.TempDir(), certDir, bloomMode(linkedRouter(t, "a", certDir, addrA, wa)))
	wa.waitUp(t)
	wb.waitUp(t)
	subscribe(t, dial(t, a, "ca", client.Options{}), `volume < 5`)
	if terms(a) != 3 || terms(b) != 3 {
		t.Fatalf("terms: a %v, b %v; want 3 each", terms(a), terms(b))
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	a2 := startAt(t, t.TempDir(), certDir, bloomMode(linkedRouter(t, "a", certDir, addrA, wa)))
	defer a2.Stop()
	wa.waitUp(t)
	wb.waitUp(t)
	subscribe(t, dial(t, a2, "ca2", client.Options{}), `exchange == "NYSE"`)
	if terms(a2) != 3 || terms(b) != 3 { // IBM's two, NYSE; the old a's volume term is gone
		t.Fatalf("after the relink: terms a %v, b %v; want 3 each", terms(a2), terms(b))
	}
	ev := bloomMarker() // IBM at price 1
	pub := dial(t, a2, "pub", client.Options{})
	if err := pub.Publish(testCtx(t), ev); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, ibm, 1); !got[0].Equal(ev) {
		t.Fatalf("b's subscriber got %v, want %v", got[0], ev)
	}
}
