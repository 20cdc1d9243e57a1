package mesh

import (
	"maps"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestAdvertProperty is TestMeshProperty with advertisements on: 2-6
// routers, random links (some refused, some racing into cycles), link
// losses, restarts, subscriptions, advertisements and their withdrawal,
// and partial delivery. Checked by the simulation:
//   - when a subscription is Ready, every grid event conforming to a Ready
//     advertisement of its component reaches it from the advertiser's
//     router; when an advertisement is Ready, every Ready subscription of
//     its component gets the grid events matching both (topology
//     unchanged since both were made);
//   - when quiet: every event conforming to an advertisement reaches
//     exactly the matching subscriptions of its component once (brute
//     force); every link holds exactly the advertisements made beyond it;
//     nothing is sent to a link that never advertised anything overlapping
//     it; what is sent holds the table's forwarding set restricted to the
//     link's advertisements, recomputed from scratch, and lies within the
//     table's forwarding set.
func TestAdvertProperty(t *testing.T) {
	for _, table := range []string{"poset", "forest"} {
		t.Run(table, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { runAdvertProperty(rt, table) })
		})
	}
}

func runAdvertProperty(rt *rapid.T, table string) {
	names := drawRouterNames(rt)
	n := len(names)
	s := newAdvertSimPart(rt, names, table, simSnapshotPart)
	nextClient := Client(1)
	for range rapid.IntRange(1, 60).Draw(rt, "ops") {
		switch rapid.IntRange(0, 12).Draw(rt, "op") {
		case 0, 1:
			i, j := rapid.IntRange(0, n-1).Draw(rt, "a"), rapid.IntRange(0, n-1).Draw(rt, "b")
			if i != j {
				_ = s.connect(i, j)
			}
		case 2:
			if len(s.conns) > 0 {
				s.disconnect(rapid.SampledFrom(s.conns).Draw(rt, "conn"))
			}
		case 3, 4:
			k := subKey{rapid.IntRange(0, n-1).Draw(rt, "router"), nextClient, 1}
			nextClient++
			s.subscribe(k, genFilter(rt))
		case 5:
			if len(s.subs) > 0 {
				s.unsubscribe(rapid.SampledFrom(sortedSubs(s.subs)).Draw(rt, "unsub"))
			}
		case 6, 7:
			k := subKey{rapid.IntRange(0, n-1).Draw(rt, "router"), nextClient, 1}
			nextClient++
			s.advertise(k, genAdvert(rt))
		case 8:
			if len(s.adv.ads) > 0 {
				k := rapid.SampledFrom(sortedSubs(s.adv.ads)).Draw(rt, "unadv")
				s.unadvertise(k)
				if rapid.Bool().Draw(rt, "reuse ref") {
					s.advertise(k, genAdvert(rt))
				}
			}
		case 9, 10:
			s.deliverSome(rt)
		case 11:
			s.settle()
		case 12:
			s.restart(rapid.IntRange(0, n-1).Draw(rt, "restart"))
		}
	}
	s.settle()
	for _, k := range sortedSubs(s.adv.ads) {
		s.unadvertise(k)
	}
	s.settle()
	for _, m := range s.routers {
		for _, lr := range m.Routes() {
			if len(lr.AdvertsReceived)+len(lr.AdvertsForwarded) > 0 {
				rt.Fatalf("no advertisement left but %s's link to %s holds adverts %q / %q", m.Name(), lr.Peer, lr.AdvertsReceived, lr.AdvertsForwarded)
			}
		}
	}
	for _, k := range sortedSubs(s.subs) {
		s.unsubscribe(k)
	}
	s.settle()
}

// genAdvert draws an advertisement, half the time from a pool of three,
// so that routers often receive one they already hold from another
// source (which floods nothing new and must still settle their links).
func genAdvert(t *rapid.T) match.Filter {
	if rapid.Bool().Draw(t, "pooled") {
		return match.MustParse(rapid.SampledFrom([]string{`x < 3`, `x < 6`, `s == "a"`}).Draw(t, "advert"))
	}
	return genFilter(t)
}

// TestAdvertConforms checks the publisher side: an event conforms when it
// matches one of the client's advertisements, and every event conforms
// with advertisements off.
func TestAdvertConforms(t *testing.T) {
	on, _ := New(Config{Name: "a", Advertise: true})
	off, _ := New(Config{Name: "a"})
	e := match.MustEvent(match.Attr{Name: "x", Value: match.Int(3)})
	if !off.Conforms(1, e) {
		t.Fatal("advertisements off: every event must conform")
	}
	if on.Conforms(1, e) {
		t.Fatal("a client with no advertisement published a conforming event")
	}
	if _, err := on.Advertise(1, 7, match.MustParse("x > 5")); err != nil {
		t.Fatal(err)
	}
	if on.Conforms(1, e) {
		t.Fatal("x=3 conforms to x > 5")
	}
	if _, err := on.Advertise(1, 8, match.MustParse("x < 5")); err != nil {
		t.Fatal(err)
	}
	if !on.Conforms(1, e) || on.Conforms(2, e) {
		t.Fatal("x=3 must conform for client 1 (x < 5) and not for client 2")
	}
	if _, err := on.Advertise(1, 8, match.MustParse("x < 9")); err == nil {
		t.Fatal("a duplicate advertisement ref was accepted")
	}
	if _, err := on.Unadvertise(1, 9); err == nil {
		t.Fatal("withdrawing an unknown advertisement was accepted")
	}
	if _, err := on.Unadvertise(1, 8); err != nil || on.Conforms(1, e) {
		t.Fatalf("after withdrawing x < 5, x=3 still conforms (err %v)", err)
	}
	on.DropClient(1, func(func(uint64, match.Filter) bool) {})
	if got := slices.Collect(maps.Keys(on.adv.total)); len(got) != 0 {
		t.Fatalf("a dropped client's advertisements stay: %q", got)
	}
	if _, err := off.Advertise(1, 1, match.MustParse("x > 1")); err == nil {
		t.Fatal("advertisements off, but Advertise was accepted")
	}
}
