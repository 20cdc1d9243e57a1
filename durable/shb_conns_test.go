package durable

import (
	"fmt"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestSHBRemotesIndex drives one SHB (pubends p and q, upstream r
// acknowledging every install at once) with random resumes (known and
// unknown ids, with CTs below the registrations' starts: remote phases),
// disconnects, unsubscribes, knowledge, nack answers, acks and timer
// firings, and checks after every step that each pubend's remotes holds
// exactly the sessions in a remote phase (what learnRemote used to find by
// visiting every session), and that every event sent matches its
// subscriber's filter. It also checks that the runs reached remote phases,
// so the index was exercised, and that the check fails on a corrupted
// index.
func TestSHBRemotesIndex(t *testing.T) {
	remoteSteps := 0
	rapid.Check(t, func(rt *rapid.T) {
		h := newSHBHarness(rt)
		for range rapid.IntRange(1, 60).Draw(rt, "ops") {
			h.step(rt)
			if err := h.s.checkRemotes(); err != nil {
				rt.Fatal(err)
			}
			for _, p := range h.s.cfg.Pubends {
				if len(h.s.pubs[p].remotes) > 0 {
					remoteSteps++
					checkRemotesCatches(rt, h.s, h.s.pubs[p])
				}
			}
		}
	})
	if remoteSteps == 0 {
		t.Fatal("no run reached a remote phase: the index was not exercised")
	}
	t.Logf("%d steps with a remote phase", remoteSteps)
}

// checkRemotesCatches checks that checkRemotes can fail: it reports pb's
// remotes missing a session in a remote phase, and holding a session that
// is not in one. pb.remotes is restored.
func checkRemotesCatches(rt *rapid.T, s *SHB, pb *shbPubend) {
	for c := range pb.remotes {
		delete(pb.remotes, c)
		err := s.checkRemotes()
		pb.remotes[c] = struct{}{}
		if err == nil {
			rt.Fatalf("pubend %s: checkRemotes missed the session of %s left out of remotes", pb.id, c.sub.id)
		}
		break
	}
	stray := &conn{}
	pb.remotes[stray] = struct{}{}
	err := s.checkRemotes()
	delete(pb.remotes, stray)
	if err == nil {
		rt.Fatalf("pubend %s: checkRemotes missed a session in remotes with no remote phase", pb.id)
	}
}

// shbHarness is one SHB under random inputs for TestSHBRemotesIndex.
type shbHarness struct {
	s       *SHB
	st      *mapStore
	now     Tick
	hi      map[string]Tick // the highest tick announced per pubend
	log     map[string]map[Tick]match.Event
	session uint64
	filters map[string]match.Filter
}

var harnessSubs = []string{"s1", "s2", "s3"}

func newSHBHarness(rt *rapid.T) *shbHarness {
	st := newMapStore()
	s, err := NewSHB(SHBConfig{Node: "shb", Upstream: "r", Pubends: []string{"p", "q"}, SubQueue: 4}, st)
	if err != nil {
		rt.Fatal(err)
	}
	h := &shbHarness{s: s, st: st, now: 1, hi: map[string]Tick{"p": 0, "q": 0},
		log: map[string]map[Tick]match.Event{"p": {}, "q": {}},
		filters: map[string]match.Filter{"s1": match.MustParse("k < 5"),
			"s2": match.MustParse("k >= 3"), "s3": match.MustParse("k exists")}}
	h.apply(rt)
	return h
}

// step applies one random input.
func (h *shbHarness) step(rt *rapid.T) {
	h.now += Tick(rapid.IntRange(1, 30_000).Draw(rt, "dt"))
	p := rapid.SampledFrom([]string{"p", "q"}).Draw(rt, "pubend")
	sub := rapid.SampledFrom(harnessSubs).Draw(rt, "sub")
	var err error
	switch op := rapid.IntRange(0, 7).Draw(rt, "op"); op {
	case 0, 1: // publish: data with a hole (Q) behind it sometimes
		prev := h.hi[p] - Tick(rapid.IntRange(0, 2).Draw(rt, "hole"))
		t := h.hi[p] + Tick(rapid.IntRange(1, 3).Draw(rt, "gap"))
		e := match.MustEvent(match.Attr{Name: "k", Value: match.Int(int64(rapid.IntRange(0, 9).Draw(rt, "k")))})
		h.log[p][t] = e
		err = h.deliver(Msg{Kind: MsgData, Pubend: p, Tick: t, Prev: max(prev, 0), Event: e})
		h.hi[p] = t
	case 2: // silence up to a new high tick
		t := h.hi[p] + Tick(rapid.IntRange(1, 3).Draw(rt, "gap"))
		err = h.deliver(Msg{Kind: MsgSilence, Pubend: p, From: h.hi[p] + 1, To: t})
		h.hi[p] = t
	case 3: // answer a nack: one logged event at or below the high tick
		if t := Tick(rapid.IntRange(0, int(h.hi[p])).Draw(rt, "answer")); h.log[p][t].Len() > 0 {
			err = h.deliver(Msg{Kind: MsgData, Pubend: p, Tick: t, Prev: t - 1, Event: h.log[p][t]})
		}
	case 4:
		err = h.resume(rt, sub)
	case 5:
		if c, ok := h.s.conns[sub]; ok {
			err = h.deliver(Msg{Kind: MsgDisconnect, Sub: sub, Session: c.session})
		}
	case 6:
		if rapid.IntRange(0, 3).Draw(rt, "unsub") == 0 {
			err = h.deliver(Msg{Kind: MsgUnsubscribe, Sub: sub})
		} else if c, ok := h.s.conns[sub]; ok {
			ct := CT{}
			for q, cs := range c.streams {
				ct[q] = cs.sent
			}
			err = h.deliver(Msg{Kind: MsgAck, Sub: sub, CT: ct})
		}
	case 7:
		err = h.s.Tick(h.now)
		if err == nil {
			h.apply(rt)
		}
	}
	if err != nil {
		rt.Fatal(err)
	}
}

// resume reconnects sub with a new session, with a CT (maybe below its
// registration's start, or for an id this SHB does not know) or without.
func (h *shbHarness) resume(rt *rapid.T, sub string) error {
	h.session++
	m := Msg{Kind: MsgResume, Sub: sub, Session: h.session, Filter: h.filters[sub]}
	if rapid.Bool().Draw(rt, "hasCT") {
		m.HasCT, m.CT = true, CT{}
		for _, p := range h.s.cfg.Pubends {
			m.CT[p] = Tick(rapid.IntRange(0, int(h.hi[p])).Draw(rt, "ct"))
		}
	}
	if err := h.deliver(m); err != nil {
		return err
	}
	if _, pending := h.s.pending[sub]; !pending {
		return nil
	}
	// r acknowledges with the highest ticks announced.
	return h.deliver(ackInstall(h.s, sub, CT{"p": h.hi["p"], "q": h.hi["q"]}))
}

// deliver steps the SHB with m (from r, or from the subscriber) and
// applies its Ready.
func (h *shbHarness) deliver(m Msg) error {
	from := "r"
	if m.Sub != "" && m.Kind != MsgInstallAck {
		from = m.Sub
	}
	if err := h.s.Step(h.now, Envelope{From: from, To: "shb", Msg: m}); err != nil {
		return err
	}
	return h.applyErr()
}

func (h *shbHarness) apply(rt *rapid.T) {
	if err := h.applyErr(); err != nil {
		rt.Fatal(err)
	}
}

// applyErr persists the SHB's Ready and checks that every event it sends
// matches the filter of the subscriber it goes to.
func (h *shbHarness) applyErr() error {
	rd := h.s.Ready()
	if err := h.st.Apply(rd.Writes, rd.Sync); err != nil {
		return err
	}
	for _, env := range rd.Msgs {
		if m := env.Msg; m.Kind == MsgEvent && !h.filters[m.Sub].Matches(m.Event) {
			return fmt.Errorf("event %v at tick %d sent to %s, whose filter %q does not match it",
				m.Event, m.Tick, m.Sub, h.filters[m.Sub].String())
		}
	}
	return nil
}
