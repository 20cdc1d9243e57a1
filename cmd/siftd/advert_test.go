package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// TestAdvertise runs three `siftd --advertise` processes in a chain r1 -
// r2 - r3 and a `sift sub` at r3: while nobody advertised, its filter stays
// at r3 (every /debug/routes shows nothing forwarded); `sift pub
// --advertise` at r1 advertises, which brings the filter to r1, then
// publishes: the subscriber gets exactly the matching events. When the
// publisher leaves, its advertisement is withdrawn everywhere (the filter
// stays). A `sift pub --advertise` whose events
// fall outside its advertisement publishes nothing. A fourth siftd without
// --advertise cannot link to r1: r1 refuses its hello (the advertise flag)
// and r4 logs the refusal, saying both ends must agree.
func TestAdvertise(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := newCluster(t, ctx, nil)
	start := func(name string, advertise bool, peers ...*node) *node {
		n := &node{name: name, listen: "127.0.0.1:0"}
		if advertise {
			n.args = []string{"--advertise"}
		}
		for _, p := range peers {
			n.peers = append(n.peers, p.addr)
		}
		c.startNode(n)
		return n
	}
	r1 := start("r1", true)
	r2 := start("r2", true, r1)
	r3 := start("r3", true, r2)
	c.waitLinks(r1, r2)
	c.waitLinks(r2, r1, r3)
	c.waitLinks(r3, r2)
	defer c.stopAll()

	aapl := match.MustParse(`symbol == "AAPL" && side == "buy"`)
	sub := c.subscribe("aapl", r3, aapl) // ready: nothing to install beyond r3 yet
	for _, err := range []error{forwarded(r3, "r2", nil), forwarded(r2, "r1", nil)} {
		if err != nil {
			t.Fatal(err)
		}
	}

	w, err := workload.Stock(workload.StockConfig{Subscriptions: 1, Events: 3000, Symbols: 40}, 5)
	if err != nil {
		t.Fatal(err)
	}
	var evs []match.Event
	for _, e := range w.Events {
		if v, ok := e.Get("symbol"); ok && v.Kind() == match.KindString && v.AsString() == "AAPL" {
			evs = append(evs, tag(e, "p1", len(evs)))
		}
	}
	want := scanMatches(aapl, evs)
	if len(want) < 10 {
		t.Fatalf("only %d events match %s: weak test", len(want), aapl)
	}
	file := writeEvents(t, t.TempDir(), evs)
	out, err := runIn(ctx, r1, "sift", "pub", "--router", r1.addr, "--certs", c.certDir, "--advertise", `symbol == "AAPL"`, file)
	if err != nil || out != fmt.Sprintf("published %d events\n", len(evs)) {
		t.Fatalf("pub: %v\n%s", err, out)
	}
	if err := sub.waitSeqs(ctx, map[string]int{"p1": seqOf(want[len(want)-1])}); err != nil {
		t.Fatal(err)
	}
	got, bad := sub.events()
	if len(bad) > 0 {
		t.Fatalf("subscriber printed non-events: %q", bad)
	}
	if err := sameEvents(got, want); err != nil {
		t.Fatalf("subscriber at r3: %v", err)
	}
	// The publisher has gone, and its advertisement with it; the
	// subscription stays where it went (a withdrawal takes nothing back:
	// it could overtake the publisher's last events on their way).
	eventually(t, ctx, "advertisement withdrawn after the publisher left", func() error {
		return errors.Join(advertsFrom(r3, "r2"), advertsFrom(r2, "r1"))
	})
	for _, err := range []error{forwarded(r3, "r2", []string{aapl.String()}), forwarded(r2, "r1", []string{aapl.String()})} {
		if err != nil {
			t.Fatal(err)
		}
	}

	sap := writeEvents(t, t.TempDir(), []match.Event{match.MustEvent(match.Attr{Name: "symbol", Value: match.Str("SAP")})})
	out, err = runIn(ctx, r1, "sift", "pub", "--router", r1.addr, "--certs", c.certDir, "--advertise", `symbol == "AAPL"`, sap)
	if err == nil || !strings.Contains(out, "matches none of the --advertise filters") {
		t.Fatalf("pub of an event outside its advertisement: %v\n%s", err, out)
	}

	r4 := start("r4", false, r1)
	r4.p.waitLine(t, ctx, regexp.MustCompile(`link refused.*link to r4 refused: this router \(r1\) runs advertisements \(--advertise\) and r4 does not; both ends of a link must agree`))
}

// forwarded checks what n's link to peer forwards (canonical texts).
func forwarded(n *node, peer string, want []string) error {
	r, err := n.routes()
	if err != nil {
		return err
	}
	l, ok := r.link(peer)
	if !ok {
		return fmt.Errorf("%s: no link to %s", n.name, peer)
	}
	if !slices.Equal(l.Forwarded, want) && len(l.Forwarded)+len(want) > 0 {
		return fmt.Errorf("%s: link to %s forwards %q, want %q", n.name, peer, l.Forwarded, want)
	}
	return nil
}

// advertsFrom checks that n's link to peer holds no advertisement.
func advertsFrom(n *node, peer string) error {
	r, err := n.routes()
	if err != nil {
		return err
	}
	if l, ok := r.link(peer); !ok || len(l.AdvertsReceived) > 0 {
		return fmt.Errorf("%s: link to %s (up: %v) holds adverts %q", n.name, peer, ok, l.AdvertsReceived)
	}
	return nil
}

// seqOf returns an event's tagged seq.
func seqOf(e match.Event) int {
	_, seq, _ := eventTag(e)
	return seq
}
