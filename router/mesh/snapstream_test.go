package mesh

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// keyFilter is k == i: filters of distinct i cover one another in no
// way, so each of them is forwarded.
func keyFilter(i int) match.Filter { return match.MustParse(fmt.Sprintf("k == %d", i)) }

// routesParts returns the Routes messages with filters queued on q, and
// the largest filter text in bytes sent in one of them.
func routesParts(q []wire.Message) (parts, largest int) {
	for _, m := range q {
		if r, ok := m.(*wire.Routes); ok && len(r.Add)+len(r.Remove) > 0 {
			parts++
			size := 0
			for _, t := range r.Add {
				size += len(t)
			}
			largest = max(largest, size)
		}
	}
	return parts, largest
}

// TestSnapshotStreamed: a link that comes up to a router holding 300
// forwarded filters gets them in parts of at most SnapshotPart bytes (plus
// one filter), with at most SnapshotWindow parts unacknowledged at any
// time, and then holds every one of them; events published behind the
// link reach every subscription.
func TestSnapshotStreamed(t *testing.T) {
	s := newPartsSim(t, []string{"a", "b"}, "shallow")
	const n = 300
	for i := range n {
		s.subscribe(subKey{0, 1, uint64(i)}, keyFilter(i))
	}
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	c := s.conns[0]
	toB := 1 // c.q[1] flows toward b (ends[1])
	if c.ends[toB].router != 1 {
		toB = 0
	}
	maxFilter := len(keyFilter(n - 1).String())
	totalParts := 0
	for steps := 0; len(s.queued()) > 0; steps++ {
		parts, largest := routesParts(c.q[toB])
		if parts > 2 {
			t.Fatalf("step %d: %d parts toward b unacknowledged (window 2)", steps, parts)
		}
		if largest > simSnapshotPart+maxFilter+3 {
			t.Fatalf("step %d: a part of %d bytes of filters (part %d)", steps, largest, simSnapshotPart)
		}
		q := s.queued()[0]
		if q[1] == toB {
			if r, ok := c.q[toB][0].(*wire.Routes); ok && len(r.Add) > 0 {
				totalParts++
			}
		}
		s.deliver(s.conns[q[0]], q[1])
	}
	if s.routers[0].Streaming(c.ends[1-toB].link) {
		t.Fatal("a still streams after everything was delivered")
	}
	if want := n / 2; totalParts < want {
		t.Fatalf("%d filters in %d parts; want at least %d parts of %d bytes", n, totalParts, want, simSnapshotPart)
	}
	if got := s.routers[1].Len(); got != n {
		t.Fatalf("b holds %d subscriptions, want %d", got, n)
	}
	for i := range n {
		e := match.MustEvent(match.Attr{Name: "k", Value: match.Int(int64(i))})
		if got := s.publish(1, e); got[subKey{0, 1, uint64(i)}] != 1 {
			t.Fatalf("event k=%d published at b: deliveries %v", i, got)
		}
	}
	s.checkQuiet()
}

// TestSnapshotStreamChanges: while a's snapshot streams to b, a client at
// a withdraws filters not sent yet and filters sent already, and adds new
// ones; b ends up holding exactly what a forwards, with no removal of a
// filter it never got (b would refuse it). Subscriptions made during the
// stream and covered by a filter still in it ("x > 5", which sorts after
// every "k == i") are Ready only once the stream is installed: the
// simulation publishes every grid event from b at each Ready and fails on
// a miss.
func TestSnapshotStreamChanges(t *testing.T) {
	s := newPartsSim(t, []string{"a", "b"}, "shallow")
	const n = 100
	for i := range n {
		s.subscribe(subKey{0, 1, uint64(i)}, keyFilter(i))
	}
	wide := match.MustParse("x > 5")
	s.subscribe(subKey{0, 1, 1000}, wide)
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	a := s.conns[0].ends[0].link
	if s.conns[0].ends[0].router != 0 {
		a = s.conns[0].ends[1].link
	}
	deliverN := func(k int) {
		for range k {
			if q := s.queued(); len(q) > 0 {
				s.deliver(s.conns[q[0][0]], q[0][1])
			}
		}
	}
	deliverN(6)
	if !s.routers[0].Streaming(a) {
		t.Fatal("the stream ended after six messages: the test does not test a stream")
	}
	s.subscribe(subKey{0, 2, 1}, match.MustParse("x == 6")) // covered by "x > 5", not sent yet
	for _, i := range []int{0, 1, 2, 50, 51, 98, 99} {      // some sent, most not yet
		s.unsubscribe(subKey{0, 1, uint64(i)})
	}
	s.subscribe(subKey{0, 1, 2000}, keyFilter(5000))
	deliverN(3)
	s.subscribe(subKey{0, 2, 2}, match.MustParse("x == 7 && s == \"b\""))
	if s.ready[subKey{0, 2, 1}] || s.ready[subKey{0, 2, 2}] {
		t.Fatal("a subscription covered by a filter still in the stream is Ready")
	}
	s.unsubscribe(subKey{0, 1, 1000}) // "x > 5" leaves before it was sent: the two are uncovered
	s.subscribe(subKey{0, 1, 1000}, wide)
	s.quiesce()
	if !s.ready[subKey{0, 2, 1}] || !s.ready[subKey{0, 2, 2}] {
		t.Fatal("the subscriptions made during the stream never became Ready")
	}
	if s.routers[0].Streaming(a) {
		t.Fatal("a still streams after everything was delivered")
	}
	l := s.routers[0].links[a]
	if got, want := s.routers[1].Len(), len(s.routers[0].table.Forwarded(l.slot)); got != want {
		t.Fatalf("b holds %d subscriptions, a forwards %d", got, want)
	}
	for k, f := range s.subs {
		for _, e := range gridEvents {
			if f.Matches(e) && s.publish(1, e)[k] != 1 {
				t.Fatalf("%s published at b misses %v (%s)", e, k, f)
			}
		}
		if i := int(k.ref); k.client == 1 && i < n {
			e := match.MustEvent(match.Attr{Name: "k", Value: match.Int(int64(i))})
			if s.publish(1, e)[k] != 1 {
				t.Fatalf("%s published at b misses %v", e, k)
			}
		}
	}
	s.checkQuiet()
}

// TestSnapshotStreamEndsOnAWithdrawnTail: while a's snapshot streams to
// b, a client at a subscribes (its Ready waits for the stream's end) and
// every filter not sent yet is withdrawn. b then acknowledges everything a
// sent in one RoutesAck (as a router does when its own acknowledgements
// wait for the routers behind it). The pump that this acknowledgement
// runs has nothing left to send and ends the stream; the Ready must come
// then, since no later acknowledgement will.
func TestSnapshotStreamEndsOnAWithdrawnTail(t *testing.T) {
	s := newPartsSim(t, []string{"a", "b"}, "shallow")
	const n = 100
	byText := map[string]subKey{}
	for i := range n {
		k := subKey{0, 1, uint64(i)}
		s.subscribe(k, keyFilter(i))
		byText[keyFilter(i).String()] = k
	}
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	c := s.conns[0]
	toA := 0 // c.q[toA] flows toward a
	if c.ends[toA].router != 0 {
		toA = 1
	}
	a := c.ends[toA].link
	for range 6 {
		if q := s.queued(); len(q) > 0 {
			s.deliver(s.conns[q[0][0]], q[0][1])
		}
	}
	l := s.routers[0].links[a]
	if l == nil || l.stream == nil || l.stream.next == len(l.stream.rest) {
		t.Fatal("the stream is not under way after six messages: the test does not test a stream")
	}
	late := subKey{0, 2, 1}
	s.subscribe(late, keyFilter(5000))
	for _, f := range slices.Clone(l.stream.rest[l.stream.next:]) {
		s.unsubscribe(byText[f.String()])
	}
	// Everything a sent reaches b; b's acknowledgements are held back and
	// replaced by one for the last seq a sent.
	for len(c.q[1-toA]) > 0 {
		s.deliver(c, 1-toA)
	}
	kept := c.q[toA][:0]
	for _, m := range c.q[toA] {
		if _, ack := m.(*wire.RoutesAck); !ack {
			kept = append(kept, m)
		}
	}
	c.q[toA] = kept
	out, err := s.routers[0].Receive(a, &wire.RoutesAck{Gen: uint64(a), Seq: l.sentSeq})
	if err != nil {
		t.Fatal(err)
	}
	s.dispatch(0, out)
	s.quiesce()
	if s.routers[0].Streaming(a) {
		t.Fatal("a still streams after everything was acknowledged")
	}
	if !s.ready[late] {
		t.Fatal("the subscription made during the stream never became Ready")
	}
	s.checkQuiet()
}

// TestSnapshotConfigRefused: a part larger than half the default frame,
// or a negative size or window, is a configuration error.
func TestSnapshotConfigRefused(t *testing.T) {
	for _, cfg := range []Config{
		{Name: "a", SnapshotPart: wire.DefaultMaxFrame},
		{Name: "a", SnapshotPart: -1},
		{Name: "a", SnapshotWindow: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// TestDropClientOneChange: a client holding 300 forwarded filters goes
// away. With the default part size the link gets one Routes removing all
// of them (not one message per subscription); with parts of about one
// filter it gets them in parts, none above the bound; either way b then
// holds nothing from a, and a pending Ready is never emitted.
func TestDropClientOneChange(t *testing.T) {
	for _, part := range []int{0, simSnapshotPart} {
		s := newSimPart(t, []string{"a", "b"}, "shallow", part)
		if err := s.connect(0, 1); err != nil {
			t.Fatal(err)
		}
		s.quiesce()
		const n = 300
		for i := range n {
			s.subscribe(subKey{0, 1, uint64(i)}, keyFilter(i))
		}
		s.quiesce()
		if got := s.routers[1].Len(); got != n {
			t.Fatalf("part %d: b holds %d, want %d", part, got, n)
		}
		s.subscribe(subKey{0, 1, n}, keyFilter(n)) // not Ready when the client leaves
		out := s.routers[0].DropClient(1, s.clientSubs(0, 1))
		for k := range s.subs {
			delete(s.subs, k)
		}
		routes, removed := 0, 0
		for _, sd := range out.Sends {
			if r, ok := sd.Msg.(*wire.Routes); ok {
				routes++
				removed += len(r.Remove)
				if len(r.Add) > 0 {
					t.Fatalf("part %d: dropping a client adds %q", part, r.Add)
				}
				if size := len(strings.Join(r.Remove, "")); part > 0 && size > part+len(keyFilter(n).String()) {
					t.Fatalf("part %d: a Routes of %d bytes of filters", part, size)
				}
			}
		}
		if removed != n+1 {
			t.Fatalf("part %d: %d removals sent, want %d", part, removed, n+1)
		}
		if part == 0 && routes != 1 {
			t.Fatalf("default part: %d Routes messages for one client leaving, want 1", routes)
		}
		if part > 0 && routes < n/2 {
			t.Fatalf("part %d: %d Routes messages for %d removals: not in parts", part, routes, n+1)
		}
		if len(out.Ready) != 0 {
			t.Fatalf("part %d: Ready %v for a client that left", part, out.Ready)
		}
		s.dispatch(0, out)
		s.quiesce()
		if got := s.routers[1].Len(); got != 0 {
			t.Fatalf("part %d: b holds %d after a's client left", part, got)
		}
		s.checkQuiet()
	}
}
