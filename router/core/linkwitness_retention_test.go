package core

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// TestLinkCacheKeepsNoFrame: the link cache remembers key values of events
// a link's reader decoded in place (DecodeOwnedLinkPublish: string values
// are substrings of the frame's body). An entry must not keep that body
// alive: with up to max(cacheMin, 2*filters) entries per link, each
// pinning a frame of up to wire.HardMaxFrame bytes, the cache would hold
// gigabytes. The test routes, through the index, an event from a large
// frame whose key value then stays cached, routes an event from another
// frame (so no scratch space points at the first), and checks that the
// first frame is collected.
func TestLinkCacheKeepsNoFrame(t *testing.T) {
	lt := NewLinkTable()
	if err := lt.Apply(1, &wire.Routes{Snapshot: true, Add: []string{`symbol == "IBM"`, `symbol == "HP"`}}); err != nil {
		t.Fatal(err)
	}
	if err := lt.Apply(2, &wire.Routes{Snapshot: true, Add: []string{`symbol exists`}}); err != nil {
		t.Fatal(err)
	}
	body := bigFrameBody(t, "IBM")
	gone := weak.Make(&body[0])
	routeOwned(t, lt, body)
	body = nil
	routeOwned(t, lt, bigFrameBody(t, "HP"))
	if got := len(lt.cache.byLink[1]); got != 2 {
		t.Fatalf("link 1 caches %d key values, want IBM and HP", got)
	}
	for range 3 {
		runtime.GC()
	}
	if gone.Value() != nil {
		t.Fatalf("the first frame's body is still reachable after it was routed: the link cache keeps it")
	}
	// The cache still decides for the first value.
	ev := match.MustEvent(match.Attr{Name: "symbol", Value: match.Str("IBM")})
	if _, d := lt.Route(0, ev, 0); d != DecidedByCache {
		t.Fatalf("IBM again: decided by %d, want the cache", d)
	}
}

// bigFrameBody returns the body of a LinkPublish frame of about 1 MiB whose
// one event has symbol sym and a large padding string.
func bigFrameBody(t *testing.T, sym string) []byte {
	t.Helper()
	ev := match.MustEvent(
		match.Attr{Name: "pad", Value: match.Str(strings.Repeat("x", 1<<20))},
		match.Attr{Name: "symbol", Value: match.Str(sym)})
	return (&wire.LinkPublish{Publish: wire.Publish{Seq: 1, Events: []match.Event{ev}}, Witness: []uint64{0}}).AppendBody(nil)
}

// routeOwned decodes body in place, as a link's reader does, and routes its
// events from client 0 without a witness.
func routeOwned(t *testing.T, lt *LinkTable, body []byte) {
	t.Helper()
	var dec wire.EventDecoder
	m, err := dec.DecodeOwnedLinkPublish(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range m.Events {
		hits, _ := lt.Route(0, ev, 0)
		if fmt.Sprint(hits) == "[]" {
			t.Fatalf("%v: no link", ev)
		}
	}
}
