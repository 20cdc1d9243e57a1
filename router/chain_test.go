package router_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
	"github.com/sift-pubsub/sift/router/mesh"
)

// TestChainForwarding links three routers a - b - c over QUIC (c dials b,
// b dials a), subscribes at c and at b, publishes at a, and checks that
// each subscriber gets exactly the events its filter matches, in order,
// with nothing extra before a final marker event that matches every
// filter; the publisher's own router delivers to a local subscriber too.
func TestChainForwarding(t *testing.T) {
	a, b, c := startChain(t, func(*router.Config) {})

	filters := map[*local.Env]string{
		c: `symbol == "IBM" && price > 50`,
		b: `volume < 2000`,
		a: `exchange == "XETRA"`,
	}
	subs := map[*local.Env]*client.Subscription{}
	for env, f := range filters {
		s, err := dial(t, env, "sub-"+env.Router.Name(), client.Options{}).Subscribe(testCtx(t), f)
		if err != nil {
			t.Fatal(err)
		}
		subs[env] = s // acknowledged: installed on every router of the chain
	}
	evs := stockEvents(7, 3000)
	marker := match.MustEvent(
		match.Attr{Name: "seq", Value: match.Int(-1)},
		match.Attr{Name: "symbol", Value: match.Str("IBM")},
		match.Attr{Name: "price", Value: match.MustFloat(1000)},
		match.Attr{Name: "volume", Value: match.Int(1)},
		match.Attr{Name: "exchange", Value: match.Str("XETRA")},
	)
	pub := dial(t, a, "pub", client.Options{})
	if err := pub.Publish(testCtx(t), append(evs, marker)...); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	for env, f := range filters {
		want := append(expected(f, evs), marker)
		if err := sameEvents(collect(t, subs[env], len(want)), want); err != nil {
			t.Fatalf("subscriber at %s (%s): %v", env.Router.Name(), f, err)
		}
		if len(want) < 10 {
			t.Fatalf("filter %s matched only %d events: weak test", f, len(want))
		}
	}
	checkDebugRoutes(t, b)
	checkLinkEvents(t, b, evs, filters[c], filters[b])
}

// startChain starts routers a - b - c (c dials b, b dials a), each
// configured by mod as well, and returns once every link is up; they stop
// at the end of the test.
func startChain(t *testing.T, mod func(*router.Config)) (a, b, c *local.Env) {
	t.Helper()
	certDir := deploymentCerts(t)
	wa, wb, wc := newLinkWatch(), newLinkWatch(), newLinkWatch()
	with := func(m func(*router.Config)) func(*router.Config) {
		return func(cfg *router.Config) { m(cfg); mod(cfg) }
	}
	a = startAt(t, t.TempDir(), certDir, with(linkedRouter(t, "a", certDir, "", wa)))
	t.Cleanup(func() { a.Stop() })
	b = startAt(t, t.TempDir(), certDir, with(linkedRouter(t, "b", certDir, "", wb, a.Addr)))
	t.Cleanup(func() { b.Stop() })
	c = startAt(t, t.TempDir(), certDir, with(linkedRouter(t, "c", certDir, "", wc, b.Addr)))
	t.Cleanup(func() { c.Stop() })
	wa.waitUp(t)
	wb.waitUp(t)
	wb.waitUp(t)
	wc.waitUp(t)
	return a, b, c
}

// debugRoutes returns env's /debug/routes, per link peer, having checked
// that /debug/routes?counts=1 gives the same links with the lists'
// lengths and no lists.
func debugRoutes(t *testing.T, env *local.Env) (router string, links map[string]mesh.LinkRoutes) {
	t.Helper()
	srv := httptest.NewServer(env.Router.Handler())
	defer srv.Close()
	type routes struct {
		Router string            `json:"router"`
		Links  []mesh.LinkRoutes `json:"links"`
	}
	get := func(path string) routes {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got routes
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got, counts := get("/debug/routes"), get("/debug/routes?counts=1")
	if len(counts.Links) != len(got.Links) {
		t.Fatalf("/debug/routes?counts=1 of %s: %d links, /debug/routes %d", got.Router, len(counts.Links), len(got.Links))
	}
	for i, l := range got.Links {
		c := counts.Links[i]
		if c.Peer != l.Peer || c.ForwardedCount != len(l.Forwarded) || c.ReceivedCount != len(l.Received) || len(c.Forwarded)+len(c.Received) != 0 {
			t.Fatalf("/debug/routes?counts=1 of %s: %+v, want the counts of %+v", got.Router, c, l)
		}
	}
	links = map[string]mesh.LinkRoutes{}
	for _, l := range got.Links {
		links[l.Peer] = l
	}
	if len(links) != len(got.Links) {
		t.Fatalf("/debug/routes of %s: two links to one peer: %+v", got.Router, got.Links)
	}
	return got.Router, links
}

// checkLinkEvents: b received from a exactly the events matching b's or
// c's filter (plus the marker) and forwarded to c exactly those matching
// c's: filtering happened at a and again at b. Each came with a witness;
// b forwarded some on the witness alone (a matched c's filter); for the
// others (a matched b's own subscriber's filter) b's cache or index
// decided.
func checkLinkEvents(t *testing.T, b *local.Env, evs []match.Event, fc, fb string) {
	t.Helper()
	scan := match.NewScan()
	scan.Insert(1, match.MustParse(fc))
	scan.Insert(2, match.MustParse(fb))
	var toB, toC float64 = 1, 1 // the marker
	for _, e := range evs {
		ids := scan.Match(e, nil)
		if len(ids) > 0 {
			toB++
		}
		if slices.Contains(ids, 1) {
			toC++
		}
	}
	m := b.Router.Metrics().LinkEvents
	if in, out := metricValue(m.WithLabelValues("a", "in")), metricValue(m.WithLabelValues("c", "out")); in != toB || out != toC {
		t.Fatalf("b: %v events in from a, %v out to c; want %v and %v (of %d published)", in, out, toB, toC, len(evs)+1)
	}
	if toB >= float64(len(evs)) || toC >= toB {
		t.Fatalf("weak test: %v of %d events reach b, %v reach c", toB, len(evs), toC)
	}
	w := b.Router.Metrics().LinkTable.Events
	witness, cache, index := metricValue(w.WithLabelValues("witness")), metricValue(w.WithLabelValues("cache")), metricValue(w.WithLabelValues("index"))
	if witness == 0 || witness+cache+index != toB {
		t.Fatalf("b's link table decided %v events by witness, %v by cache, %v by index; want some by witness, %v in all", witness, cache, index, toB)
	}
}

// checkDebugRoutes reads b's /debug/routes: b links to a and to c, holds
// the filter c forwarded, and forwards to a the filters of c's and its own
// subscriber.
func checkDebugRoutes(t *testing.T, b *local.Env) {
	t.Helper()
	name, peers := debugRoutes(t, b)
	if name != "b" || len(peers) != 2 {
		t.Fatalf("/debug/routes of b: %s, %+v", name, peers)
	}
	wantToA := canonical([]string{`symbol == "IBM" && price > 50`, `volume < 2000`})
	if !slices.Equal(peers["a"].Forwarded, wantToA) || !slices.Equal(peers["c"].Received, canonical([]string{`symbol == "IBM" && price > 50`})) {
		t.Fatalf("/debug/routes of b: to a %q (want %q), from c %q", peers["a"].Forwarded, wantToA, peers["c"].Received)
	}
}
