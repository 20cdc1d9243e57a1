package mesh

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"pgregory.net/rapid"
)

// TestNewLinksNeverCloseExistingOnes is the property behind issue 20's
// "cycle refusal never touches an existing link". 3-7 routers start as a
// random forest whose links came up one at a time, each settled before
// the next (the existing links), with subscriptions here and there. Then
// 1-4 new links are dialled at once, between random routers, and every
// step of their handshakes (the dialler's hello, made when it dials; the
// accepting router's Accept and answer; the dialler's LinkUp on the
// answer, which the messages of the accepting side wait behind) is
// interleaved at random with the delivery of every message in flight, so
// new links race past each other's checks into cycles and Reach messages
// arrive in any order. Throughout, no existing link is ever closed; once
// nothing is in flight the links form a forest again (a cycle that is
// left would circulate events for ever), both ends of every link hold the
// same epoch, and every event reaches each matching subscription of its
// component exactly once.
func TestNewLinksNeverCloseExistingOnes(t *testing.T) {
	rapid.Check(t, runNewLinksProperty)
}

// dial is a link being set up between a dialler and an accepting router.
type dial struct {
	from, to int
	hello    *wire.LinkHello // the dialler's, made when it dialled
	answer   *wire.LinkHello // the accepting router's, once accepted
	c        *conn           // once accepted
}

func runNewLinksProperty(rt *rapid.T) {
	names := make([]string, rapid.IntRange(3, 7).Draw(rt, "routers"))
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i+1)
	}
	n := len(names)
	s := newSim(rt, names, "poset")
	for i := 1; i < n; i++ {
		if p := rapid.IntRange(-1, i-1).Draw(rt, "parent"); p >= 0 && len(s.routers[p].links) < 4 { // the sim's MaxLinks
			from, to := i, p
			if rapid.Bool().Draw(rt, "parent dials") {
				from, to = p, i
			}
			if err := s.connect(from, to); err != nil {
				rt.Fatalf("existing link %s-%s: %v", names[from], names[to], err)
			}
			s.quiesce()
		}
	}
	existing := slices.Clone(s.conns)
	for c := range rapid.IntRange(0, 4).Draw(rt, "subscriptions") {
		s.subscribe(subKey{rapid.IntRange(0, n-1).Draw(rt, "at"), Client(c + 1), 1}, genFilter(rt))
	}
	s.quiesce()
	var dials []*dial
	for range rapid.IntRange(1, 4).Draw(rt, "new links") {
		i, j := rapid.IntRange(0, n-1).Draw(rt, "from"), rapid.IntRange(0, n-1).Draw(rt, "to")
		if i != j {
			dials = append(dials, &dial{from: i, to: j, hello: roundTrip(rt, s.routers[i].Hello()).(*wire.LinkHello)})
		}
	}
	checkExisting := func(when string) {
		for _, c := range existing {
			if !slices.Contains(s.conns, c) {
				rt.Fatalf("%s: the existing link %s-%s was closed", when, s.name(c.ends[0].router), s.name(c.ends[1].router))
			}
		}
	}
	for step := 0; ; step++ {
		q := s.queued()
		if len(q) == 0 && len(dials) == 0 {
			break
		}
		if step > 100_000 {
			rt.Fatal("messages never stop")
		}
		k := rapid.IntRange(0, len(q)+len(dials)-1).Draw(rt, "step")
		if k < len(q) {
			s.deliver(s.conns[q[k][0]], q[k][1])
			checkExisting("after a delivery")
			continue
		}
		d := dials[k-len(q)]
		if s.advanceDial(d) {
			dials = slices.DeleteFunc(dials, func(o *dial) bool { return o == d })
		}
		checkExisting(fmt.Sprintf("after a handshake step of %s-%s", names[d.from], names[d.to]))
	}
	s.settle()
	for _, c := range s.conns {
		a, b := s.routers[c.ends[0].router].links[c.ends[0].link], s.routers[c.ends[1].router].links[c.ends[1].link]
		if a == nil || b == nil || a.epoch != b.epoch {
			rt.Fatalf("link %s-%s: the ends disagree (%v, %v)", s.name(c.ends[0].router), s.name(c.ends[1].router), a, b)
		}
	}
}

// advanceDial takes d's next handshake step: the accepting router's Accept
// (its answer and first messages wait for the dialler), then the
// dialler's LinkUp on the answer. It reports whether d is over (up or
// refused).
func (s *sim) advanceDial(d *dial) bool {
	if d.c == nil {
		lj, answer, out, err := s.routers[d.to].Accept(d.hello)
		if err != nil {
			s.logf("%s refuses %s: %v", s.name(d.to), s.name(d.from), err)
			return true
		}
		d.answer = roundTrip(s.t, answer).(*wire.LinkHello)
		d.c = &conn{ends: [2]end{{d.from, 0}, {d.to, lj}}, dialling: true}
		s.conns = append(s.conns, d.c)
		s.topo++
		s.dispatch(d.to, out)
		return false
	}
	if !slices.Contains(s.conns, d.c) {
		return true // the accepting router closed it before the answer arrived
	}
	li, out, err := s.routers[d.from].LinkUp(d.answer)
	if err != nil {
		s.logf("%s refuses the answer of %s: %v", s.name(d.from), s.name(d.to), err)
		s.disconnect(d.c)
		return true
	}
	d.c.ends[0].link, d.c.dialling = li, false
	s.topo++
	s.dispatch(d.from, out)
	return true
}
