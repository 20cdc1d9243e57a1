package mesh

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// TestAdvertModeMismatch links a router with advertisements to one
// without: each refuses the other's hello (its advertise flag) with an
// error that says both ends must agree, and takes no link. A peer whose
// hello agrees but whose first message does not (it lied, or predates
// the flag) is refused on that message.
func TestAdvertModeMismatch(t *testing.T) {
	on, _ := New(Config{Name: "a", Advertise: true})
	off, _ := New(Config{Name: "b"})
	hOn, hOff := on.Hello(), off.Hello()
	if !hOn.Advertise || hOff.Advertise {
		t.Fatalf("hello advertise flags %v (on) and %v (off)", hOn.Advertise, hOff.Advertise)
	}
	for _, c := range []struct {
		m    *Mesh
		h    *wire.LinkHello
		want string
	}{
		{on, hOff, "this router (a) runs advertisements (--advertise) and b does not; both ends of a link must agree"},
		{off, hOn, "a runs advertisements (--advertise) and this router (b) does not; both ends of a link must agree"},
	} {
		_, out, err := c.m.LinkUp(c.h)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s took %s's hello: %v", c.m.Name(), c.h.Name, err)
		}
		if len(out.Sends)+len(c.m.links)+len(c.m.Routes()) != 0 {
			t.Errorf("%s: a refused hello changed state (%d sends, %d links)", c.m.Name(), len(out.Sends), len(c.m.links))
		}
	}

	liarOn, liarOff := *hOn, *hOff // flags that disagree with what follows
	liarOn.Advertise, liarOff.Advertise = false, true
	lOn, outOn, err := on.LinkUp(&liarOff)
	if err != nil {
		t.Fatal(err)
	}
	lOff, outOff, err := off.LinkUp(&liarOn)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := outOn.Sends[0].Msg.(*wire.Adverts); !ok {
		t.Fatalf("first message with advertisements on is %s, want adverts", describe(outOn.Sends[0].Msg))
	}
	if _, err := off.Receive(lOff, outOn.Sends[0].Msg); err == nil || !strings.Contains(err.Error(), "both ends of a link must agree") {
		t.Errorf("router without advertisements took an adverts message: %v", err)
	}
	if _, err := on.Receive(lOn, outOff.Sends[0].Msg); err == nil || !strings.Contains(err.Error(), "both ends of a link must agree") {
		t.Errorf("router with advertisements took routes before adverts: %v", err)
	}
}

// TestBadAdvertsChangeNothing sends malformed Adverts on a link: each is
// an error naming the problem, and nothing changes (held advertisements,
// what is sent, the link's sequence).
func TestBadAdvertsChangeNothing(t *testing.T) {
	s := newAdvertSim(t, []string{"a", "b"}, "")
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	s.advertise(subKey{1, 1, 1}, match.MustParse("x > 1"))
	s.subscribe(subKey{0, 2, 1}, match.MustParse("x > 3"))
	s.quiesce()
	a := s.routers[0]
	l := a.sortedLinks()[0]
	before := a.Routes()
	if got := before[0].Forwarded; !slices.Equal(got, []string{"x > 3"}) {
		t.Fatalf("a forwards %q, want x > 3", got)
	}
	next := l.recvSeq + 1
	cases := []struct {
		msg  *wire.Adverts
		want string
	}{
		{&wire.Adverts{Gen: l.peerGen, Seq: next + 1, Add: []string{"x > 5"}}, "seq"},
		{&wire.Adverts{Gen: l.peerGen + 1, Seq: next, Add: []string{"x > 5"}}, "session"},
		{&wire.Adverts{Gen: l.peerGen, Seq: next, Add: []string{"x > 5", "x >"}}, `filter "x >"`},
		{&wire.Adverts{Gen: l.peerGen, Seq: next, Add: []string{"x > 1"}}, "twice"},
		{&wire.Adverts{Gen: l.peerGen, Seq: next, Add: []string{"x > 7", "x>7"}}, "twice"},
		{&wire.Adverts{Gen: l.peerGen, Seq: next, Remove: []string{"y == 1"}, Add: []string{"x > 0"}}, "never advertised"},
		{&wire.Adverts{Gen: l.peerGen, Seq: next, Remove: []string{"x > 1", "x > 1"}}, "never advertised"},
	}
	for _, c := range cases {
		out, err := a.Receive(l.id, c.msg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", describeAdverts(c.msg), err, c.want)
		}
		if len(out.Sends)+len(out.Ready)+len(out.Close) != 0 {
			t.Errorf("%s: output %+v after an error", describeAdverts(c.msg), out)
		}
		if got := a.Routes(); !slices.EqualFunc(got, before, sameRoutes) || l.recvSeq != next-1 {
			t.Fatalf("%s changed the state: %+v, was %+v", describeAdverts(c.msg), got, before)
		}
	}
	// A well-formed withdrawal is taken; it takes nothing back (events
	// published under it may still be on their way), and is acknowledged.
	out, err := a.Receive(l.id, &wire.Adverts{Gen: l.peerGen, Seq: next, Remove: []string{"x>1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Sends) != 1 || describe(out.Sends[0].Msg) != "ack seq="+fmt.Sprint(next) {
		t.Fatalf("withdrawing the advertisement sent %v, want only its ack", out.Sends)
	}
	if got := a.Routes()[0]; len(got.AdvertsReceived) != 0 || !slices.Equal(got.Forwarded, []string{"x > 3"}) {
		t.Fatalf("after the withdrawal a holds adverts %q and forwards %q, want none and x > 3", got.AdvertsReceived, got.Forwarded)
	}
}

func sameRoutes(a, b LinkRoutes) bool {
	return slices.Equal(a.Forwarded, b.Forwarded) && slices.Equal(a.Received, b.Received) &&
		slices.Equal(a.AdvertsForwarded, b.AdvertsForwarded) && slices.Equal(a.AdvertsReceived, b.AdvertsReceived) &&
		a.Unacked == b.Unacked
}
