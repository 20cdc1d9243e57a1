package router

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/core"
)

// wantedLoop is a started matching loop without links and one client
// connection (id 1) with no subscriptions.
func wantedLoop(t *testing.T) (*matchLoop, *conn) {
	t.Helper()
	eng := core.NewEngine(match.NewFast(match.FastConfig{}), 0)
	lk, err := newLinks(Config{}, eng)
	if err != nil {
		t.Fatal(err)
	}
	l := &matchLoop{eng: eng, conns: map[ifaceID]*conn{}, metrics: NewMetrics(nil), links: lk}
	l.startWanted()
	c := &conn{id: 1, q: newSendQueue(1024, 1<<20)}
	l.step(loopMsg{in: core.Attach{Conn: 1}, conn: c})
	return l, c
}

// readBatch does what a data reader does: decode a Publish body with the
// loop's current wanted set and stamp the message with its version.
func readBatch(l *matchLoop, evs ...match.Event) loopMsg {
	var dec wire.EventDecoder
	var ver uint64
	dec.Wanted, ver = l.want.load()
	body := (&wire.Publish{Seq: 1, Events: evs}).AppendBody(nil)
	p, err := dec.DecodeOwnedPublish(body)
	if err != nil {
		panic(err)
	}
	return loopMsg{in: core.Publish{Conn: 99, Pub: p}, wantVer: ver}
}

func subscribe(t *testing.T, l *matchLoop, sub uint64, filter string) {
	t.Helper()
	l.step(coreMsg(core.Subscribe{Conn: 1, Sub: sub, Filter: filter}))
	if _, ok := l.eng.Filter(1, sub); !ok {
		t.Fatalf("subscription %d (%s) not installed", sub, filter)
	}
}

// TestBatchDecodedBeforeNewNameIsDecodedAgain: a batch a reader decoded
// while no filter named `late`, matched after a subscription on `late`
// was installed, is delivered to it: the loop decodes it again with the
// current names. (Without the second decoding the event lacks `late` and
// the subscription misses it.)
func TestBatchDecodedBeforeNewNameIsDecodedAgain(t *testing.T) {
	l, c := wantedLoop(t)
	subscribe(t, l, 1, `symbol == "IBM"`)
	ev := match.MustEvent(
		match.Attr{Name: "late", Value: match.Bool(true)},
		match.Attr{Name: "price", Value: match.Int(3)},
		match.Attr{Name: "symbol", Value: match.Str("HP")},
	)
	early := readBatch(l, ev)
	pub := early.in.(core.Publish).Pub
	if got := pub.Events[0].Len(); got != 1 {
		t.Fatalf("decoded under {symbol}: %d attributes, want 1 (%v)", got, pub.Events[0])
	}
	subscribe(t, l, 2, `late == true`)
	queuedItems(t, c)
	l.step(early)
	got := queuedItems(t, c)
	if len(got) != 1 || len(got[0].Subs) != 1 || got[0].Subs[0] != 2 {
		t.Fatalf("deliveries %+v, want the event once, to subscription 2", got)
	}
	if !pub.Events[0].Equal(match.MustEvent(ev.At(0), ev.At(2))) {
		t.Fatalf("decoded again: %v, want late and symbol", pub.Events[0])
	}
}

// TestWantedVersions: the set grows only with new names, each growth is a
// new version, and past maxWantedNames it becomes every name.
func TestWantedVersions(t *testing.T) {
	l, _ := wantedLoop(t)
	set, v1 := l.want.load()
	if set == nil || len(set.Names()) != 0 {
		t.Fatalf("started set %v, want empty", set)
	}
	subscribe(t, l, 1, `a == 1 && b > 2`)
	set, v2 := l.want.load()
	if v2 != v1+1 || set.String() != "{a,b}" {
		t.Fatalf("after a,b: version %d set %v, want %d {a,b}", v2, set, v1+1)
	}
	subscribe(t, l, 2, `b < 9`)
	if _, v := l.want.load(); v != v2 {
		t.Fatalf("no new name: version %d, want %d", v, v2)
	}
	l.step(coreMsg(core.Unsubscribe{Conn: 1, Sub: 1}))
	if set, _ := l.want.load(); !set.Has("a") {
		t.Fatalf("unsubscribing removed a name: %v", set)
	}
	for i := range maxWantedNames {
		subscribe(t, l, uint64(10+i), fmt.Sprintf("n%d exists", i))
	}
	set, v := l.want.load()
	if set != nil {
		t.Fatalf("%d names: set %v, want all", maxWantedNames+2, set)
	}
	subscribe(t, l, 5000, `zz exists`)
	if _, v2 := l.want.load(); v2 != v {
		t.Fatalf("all names: a new filter published version %d (was %d)", v2, v)
	}
}

// TestWantedAllWithAdverts: advertisements check events against
// advertised filters, beyond the loop's own, so the loop decodes in full.
func TestWantedAllWithAdverts(t *testing.T) {
	eng := core.NewEngine(match.NewFast(match.FastConfig{}), 0)
	lk, err := newLinks(Config{}, eng)
	if err != nil {
		t.Fatal(err)
	}
	lk.adverts = &advertState{}
	l := &matchLoop{eng: eng, links: lk}
	l.startWanted()
	if set, v := l.want.load(); set != nil || v == 0 {
		t.Fatalf("adverts: set %v version %d, want all", set, v)
	}
}

// TestWantedFollowsBloomDictionary: in Bloom mode the loop decodes only
// the names of its filters and of its dictionary's terms; a term a link
// floods adds its constraint's and qualifier's names in a new version
// before any later summary, and a term on known names publishes nothing.
func TestWantedFollowsBloomDictionary(t *testing.T) {
	eng := core.NewEngine(match.NewFast(match.FastConfig{}), 0)
	lk, err := newLinks(Config{Name: "r", MaxLinks: 1, Forward: ForwardBloom}, eng)
	if err != nil {
		t.Fatal(err)
	}
	d := lk.core.BloomDict()
	l := &matchLoop{eng: eng, links: lk}
	l.startWanted()
	set, v0 := l.want.load()
	if set == nil || v0 == 0 || len(l.want.names) != 0 {
		t.Fatalf("bloom loop starts with set %v version %d names %v, want an empty set", set, v0, l.want.names)
	}
	d.LinkUp(7)
	receive := func(qual, c string) {
		t.Helper()
		if _, err := d.Receive(7, &wire.BloomTerms{Add: []wire.BloomTerm{{Qual: qual, C: c}}}); err != nil {
			t.Fatal(err)
		}
		l.carryCore() // the core reports the term's new names in its Ready
	}
	receive(`region == "eu"`, `price > 10`)
	set, v1 := l.want.load()
	if v1 == v0 || set == nil || len(l.want.names) != 2 {
		t.Fatalf("after a qualified term: version %d (was %d), names %v", v1, v0, l.want.names)
	}
	for _, name := range []string{"region", "price"} {
		if _, ok := l.want.names[name]; !ok {
			t.Errorf("name %s of the term not wanted: %v", name, l.want.names)
		}
	}
	receive("", `price < 5`)
	if _, v2 := l.want.load(); v2 != v1 {
		t.Fatalf("a term on known names published version %d (was %d)", v2, v1)
	}
}
