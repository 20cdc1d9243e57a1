package mesh

import (
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// TestBadRoutesChangeNothing sends malformed Routes on a link: each is an
// error naming the problem, and the table and what the link holds are
// unchanged.
func TestBadRoutesChangeNothing(t *testing.T) {
	s := newSim(t, []string{"a", "b"}, "")
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	s.subscribe(subKey{1, 1, 1}, match.MustParse("x > 1"))
	s.quiesce()
	a := s.routers[0]
	l := a.sortedLinks()[0]
	before := a.table.Structure()
	cases := []struct {
		msg  *wire.Routes
		want string
	}{
		{&wire.Routes{Gen: l.peerGen, Seq: l.recvSeq + 2, Add: []string{"x > 5"}}, "seq"},
		{&wire.Routes{Gen: l.peerGen + 1, Seq: l.recvSeq + 1, Add: []string{"x > 5"}}, "session"},
		{&wire.Routes{Gen: l.peerGen, Seq: l.recvSeq + 1, Add: []string{"x > 5", "x >"}}, `filter "x >"`},
		{&wire.Routes{Gen: l.peerGen, Seq: l.recvSeq + 1, Remove: []string{"x > 1", "x > 1"}}, "never sent"},
		{&wire.Routes{Gen: l.peerGen, Seq: l.recvSeq + 1, Remove: []string{"y == 1"}, Add: []string{"x > 0"}}, "never sent"},
	}
	for _, c := range cases {
		out, err := a.Receive(l.id, c.msg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", describe(c.msg), err, c.want)
		}
		if len(out.Sends)+len(out.Ready)+len(out.Close) != 0 {
			t.Errorf("%s: output %+v after an error", describe(c.msg), out)
		}
		if got := a.table.Structure(); got != before || len(a.table.HeldBy(l.slot)) != 1 || a.table.Count(l.slot, match.MustParse("x > 1")) != 1 {
			t.Fatalf("%s changed the state:\n%s\nheld %v", describe(c.msg), got, a.table.HeldBy(l.slot))
		}
	}
	if _, err := a.Receive(l.id, &wire.RoutesAck{Gen: uint64(l.id), Seq: l.sentSeq + 1}); err == nil {
		t.Error("an ack for a message never sent was accepted")
	}
	if _, err := a.Receive(l.id, &wire.Reach{Names: []string{"z"}}); err == nil {
		t.Error("a reach without the peer's name was accepted")
	}
	if _, err := a.Receive(l.id, &wire.Subscribe{ID: 1, Filter: "x > 1"}); err == nil {
		t.Error("a client message on a link was accepted")
	}
	if out, err := a.Receive(l.id+100, &wire.Routes{Seq: 9}); err != nil || len(out.Sends) != 0 {
		t.Errorf("a message on a link that has gone: %v, %+v", err, out)
	}
}

// TestLinkUpRefusals checks LinkUp's refusals and that they change
// nothing.
func TestLinkUpRefusals(t *testing.T) {
	m, err := New(Config{Name: "a", MaxLinks: 1})
	if err != nil {
		t.Fatal(err)
	}
	hello := func(name string, reach ...string) *wire.LinkHello {
		return &wire.LinkHello{MinVersion: 1, MaxVersion: 1, Name: name, Reach: append(reach, name)}
	}
	for _, c := range []struct {
		h    *wire.LinkHello
		want string
	}{
		{&wire.LinkHello{MinVersion: 3, MaxVersion: 4, Name: "b", Reach: []string{"b"}}, "versions 3-4"},
		{hello("a"), "cycle: a reaches this router"},
		{hello("c", "a"), "cycle"},
	} {
		if _, _, err := m.LinkUp(c.h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hello %+v: error %v, want %q", c.h, err, c.want)
		}
	}
	if _, _, err := m.LinkUp(hello("b", "d")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		h    *wire.LinkHello
		want string
	}{
		{hello("b"), "already linked to b"},
		{hello("e", "d"), "d is reachable through e and through b"},
		{hello("f"), "1 links up already"},
	} {
		if _, _, err := m.LinkUp(c.h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hello %+v: error %v, want %q", c.h, err, c.want)
		}
	}
	if len(m.links) != 1 {
		t.Errorf("%d links up after refusals, want 1", len(m.links))
	}
}

// TestEpochRefusals: a dialling router's hello that claims a link epoch
// (which would let it pass for an old link), an answer whose epoch is not
// above its own clock, reach epochs that do not pair with the names, and
// epochs above MaxEpoch (in a hello or a Reach) are refused, and change
// nothing: no link, no clock
// moved, the link's reachable set as it was.
func TestEpochRefusals(t *testing.T) {
	m, err := New(Config{Name: "a", Incarnation: 3})
	if err != nil {
		t.Fatal(err)
	}
	hello := func(name string) *wire.LinkHello {
		return &wire.LinkHello{MinVersion: 1, MaxVersion: 1, Name: name, Reach: []string{name}}
	}
	claim := hello("b")
	claim.Epoch = 1
	if _, _, _, err := m.Accept(claim); err == nil || !strings.Contains(err.Error(), "carries no link epoch") {
		t.Errorf("a dialler's hello with an epoch: %v", err)
	}
	low := hello("b")
	low.Clock, low.Epoch = 5<<epochTieBits, 5<<epochTieBits
	if _, _, err := m.LinkUp(low); err == nil || !strings.Contains(err.Error(), "not above its clock") {
		t.Errorf("an answer whose epoch is its clock: %v", err)
	}
	odd := hello("b")
	odd.Reach, odd.ReachEpochs = []string{"b", "c"}, []uint64{7 << epochTieBits}
	if _, _, _, err := m.Accept(odd); err == nil || !strings.Contains(err.Error(), "1 reach epochs for 2 names") {
		t.Errorf("one reach epoch for two names: %v", err)
	}
	huge := hello("b")
	huge.Clock = MaxEpoch + 1 // the next epoch would wrap around and look oldest
	if _, _, _, err := m.Accept(huge); err == nil || !strings.Contains(err.Error(), "above the maximum") {
		t.Errorf("a clock above MaxEpoch: %v", err)
	}
	if len(m.links) != 0 || m.clock != 0 {
		t.Fatalf("refused hellos left %d links, clock %#x", len(m.links), m.clock)
	}
	id, _, _, err := m.Accept(hello("b"))
	if err != nil {
		t.Fatal(err)
	}
	clock := m.clock
	if _, err := m.Receive(id, &wire.Reach{Names: []string{"b", "c"}, Epochs: []uint64{1 << 60}}); err == nil || !strings.Contains(err.Error(), "1 epochs for 2 names") {
		t.Errorf("a Reach with one epoch for two names: %v", err)
	}
	if _, err := m.Receive(id, &wire.Reach{Names: []string{"b", "c"}, Epochs: []uint64{0, 1 << 63}}); err == nil || !strings.Contains(err.Error(), "above the maximum") {
		t.Errorf("a Reach epoch above MaxEpoch: %v", err)
	}
	if r := m.Routes()[0]; strings.Join(r.Reach, ",") != "b" || m.clock != clock {
		t.Errorf("after a refused Reach: reach %v, clock %#x (was %#x)", r.Reach, m.clock, clock)
	}
}

// TestRoutesCanonicalText checks that a neighbour may spell a filter any
// way: removals and snapshots match what it holds by canonical text.
func TestRoutesCanonicalText(t *testing.T) {
	s := newSim(t, []string{"a", "b"}, "")
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	s.quiesce()
	a := s.routers[0]
	l := a.sortedLinks()[0]
	steps := []*wire.Routes{
		{Gen: l.peerGen, Seq: 2, Add: []string{"x>1", "x > 1"}},
		{Gen: l.peerGen, Seq: 3, Remove: []string{"x >1"}},
		{Gen: l.peerGen, Seq: 4, Snapshot: true, Add: []string{"x  >  1"}},
	}
	for _, r := range steps {
		if _, err := a.Receive(l.id, r); err != nil {
			t.Fatalf("%s: %v", describe(r), err)
		}
	}
	if got := a.Routes()[0].Received; len(got) != 1 || got[0] != "x > 1" {
		t.Fatalf("received %q, want [x > 1]", got)
	}
	if a.Len() != 1 {
		t.Fatalf("table holds %d subscriptions, want 1", a.Len())
	}
}

// TestLinkVersions: a router announces link versions 1 to wire.LinkVersion
// (or to its configured LinkVersion), links with a peer of any version in
// that range at the highest both announce, and refuses a peer whose range
// does not meet its own; a configured version out of range is refused.
func TestLinkVersions(t *testing.T) {
	for _, c := range []struct {
		own, peerMin, peerMax uint64
		want                  uint64 // 0: refused
	}{
		{0, 1, 1, 1},
		{0, 1, 2, 2},
		{0, 2, 2, 2},
		{0, 1, 7, wire.LinkVersion},
		{0, 3, 7, 0},
		{1, 1, 2, 1},
		{1, 2, 2, 0},
		{2, 1, 1, 1},
	} {
		m, err := New(Config{Name: "a", LinkVersion: c.own})
		if err != nil {
			t.Fatal(err)
		}
		announced := c.own
		if announced == 0 {
			announced = wire.LinkVersion
		}
		if h := m.Hello(); h.MinVersion != wire.Version || h.MaxVersion != announced {
			t.Errorf("own %d: hello announces %d-%d, want %d-%d", c.own, h.MinVersion, h.MaxVersion, wire.Version, announced)
		}
		id, _, err := m.LinkUp(&wire.LinkHello{MinVersion: c.peerMin, MaxVersion: c.peerMax, Name: "b", Reach: []string{"b"}})
		switch {
		case c.want == 0 && (err == nil || !strings.Contains(err.Error(), "protocol versions")):
			t.Errorf("own %d, peer %d-%d: %v, want a version refusal", c.own, c.peerMin, c.peerMax, err)
		case c.want != 0 && err != nil:
			t.Errorf("own %d, peer %d-%d: %v", c.own, c.peerMin, c.peerMax, err)
		case c.want != 0 && m.LinkVersion(id) != c.want:
			t.Errorf("own %d, peer %d-%d: link version %d, want %d", c.own, c.peerMin, c.peerMax, m.LinkVersion(id), c.want)
		}
		if c.want == 0 && len(m.links) != 0 {
			t.Errorf("own %d, peer %d-%d: a refused link is up", c.own, c.peerMin, c.peerMax)
		}
	}
	if got := (&Mesh{}).LinkVersion(5); got != 0 {
		t.Errorf("version of a link that is not up: %d", got)
	}
	for _, v := range []uint64{wire.LinkVersion + 1, 1 << 40} {
		if _, err := New(Config{Name: "a", LinkVersion: v}); err == nil || !strings.Contains(err.Error(), "link version") {
			t.Errorf("link version %d: %v, want a refusal", v, err)
		}
	}
}
