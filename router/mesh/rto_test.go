package mesh

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
	"pgregory.net/rapid"
)

// assistant answers RTO queries: honestly, or as a liar drawing random
// bits (the mesh must then lose no event under verify).
type assistant struct {
	liar bool
	t    *rapid.T
}

func (a assistant) answer(q poset.Query) poset.Answer {
	if !a.liar {
		return poset.Evaluate(q)
	}
	n := len(q.Filters)
	draw := func(label string) poset.Bits {
		b := poset.NewBits(n)
		for i := range n {
			if rapid.Bool().Draw(a.t, label) {
				b.Set(i)
			}
		}
		return b
	}
	return poset.Answer{Up: draw("up"), Down: draw("down"), Overlap: draw("overlap")}
}

// rtoRound answers every current query of p with k answers from as (one
// per client, cycling).
func rtoRound(p *poset.Placement, as []assistant) [][]poset.Answer {
	qs := p.Queries()
	out := make([][]poset.Answer, len(qs))
	for i, q := range qs {
		for j := range p.Clients() {
			out[i] = append(out[i], as[j%len(as)].answer(q))
		}
	}
	return out
}

// startedRTO is a placement left waiting for answers.
type startedRTO struct {
	k subKey
	p *poset.Placement
}

// subscribeRTO subscribes k through RTO and runs the placement to the end
// with the given assistants, as the router's driver does.
func (s *sim) subscribeRTO(k subKey, f match.Filter, cfg poset.RTOConfig, as []assistant) {
	m := s.routers[k.router]
	p, out, err := m.StartSubscribeRTO(k.client, k.ref, f, cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	s.subs[k] = f
	s.subTopo[k] = s.topo
	s.dispatch(k.router, out)
	for p != nil && m.Placing(k.client, k.ref) {
		out, _, err := m.AnswerRTO(k.client, k.ref, rtoRound(p, as))
		if err != nil {
			s.t.Fatal(err)
		}
		s.dispatch(k.router, out)
	}
}

// TestMeshRTOProperty runs the mesh property with client subscriptions
// placed through RTO: honest and lying assistants, under verify and under
// majority with an honest majority, interleaved with placements left
// pending across other operations (stale: the router falls back). The
// property's checks (Ready means installed; at quiescence every event
// reaches exactly the matching subscriptions) prove no lie loses an event.
func TestMeshRTOProperty(t *testing.T) {
	for _, table := range []string{"poset", "forest"} {
		t.Run(table, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { runMeshRTOProperty(rt, table) })
		})
	}
}

func runMeshRTOProperty(rt *rapid.T, table string) {
	n := rapid.IntRange(2, 4).Draw(rt, "routers")
	names := []string{"r0", "r1", "r2", "r3"}[:n]
	s := newPartsSim(rt, names, table)
	honest, liar := assistant{t: rt}, assistant{liar: true, t: rt}
	policies := []struct {
		cfg poset.RTOConfig
		as  []assistant
	}{
		{poset.RTOConfig{Policy: poset.Verify, VectorSize: 2}, []assistant{liar}},
		{poset.RTOConfig{Policy: poset.Verify}, []assistant{honest}},
		{poset.RTOConfig{Policy: poset.Majority, Clients: 3, VectorSize: 3}, []assistant{honest, liar, honest}},
	}
	var pendingRTO []startedRTO
	nextClient := Client(1)
	for range rapid.IntRange(1, 40).Draw(rt, "ops") {
		switch rapid.IntRange(0, 7).Draw(rt, "op") {
		case 0:
			i, j := rapid.IntRange(0, n-1).Draw(rt, "a"), rapid.IntRange(0, n-1).Draw(rt, "b")
			if i != j {
				_ = s.connect(i, j)
			}
		case 1, 2:
			k := subKey{rapid.IntRange(0, n-1).Draw(rt, "router"), nextClient, 1}
			nextClient++
			pol := rapid.SampledFrom(policies).Draw(rt, "policy")
			s.subscribeRTO(k, genFilter(rt), pol.cfg, pol.as)
		case 3: // a placement left waiting while other things happen
			k := subKey{rapid.IntRange(0, n-1).Draw(rt, "router"), nextClient, 1}
			nextClient++
			f := genFilter(rt)
			p, out, err := s.routers[k.router].StartSubscribeRTO(k.client, k.ref, f, poset.RTOConfig{Policy: poset.Verify})
			if err != nil {
				rt.Fatal(err)
			}
			s.subs[k] = f
			s.subTopo[k] = -1
			s.dispatch(k.router, out)
			if p != nil {
				pendingRTO = append(pendingRTO, startedRTO{k, p})
			}
		case 4:
			k := subKey{rapid.IntRange(0, n-1).Draw(rt, "router"), nextClient, 1}
			nextClient++
			s.subscribe(k, genFilter(rt))
		case 5:
			if len(s.subs) > 0 {
				k := rapid.SampledFrom(sortedSubs(s.subs)).Draw(rt, "unsub")
				s.unsubscribe(k) // may cancel a pending placement
			}
		case 6:
			for range rapid.IntRange(1, 10).Draw(rt, "steps") {
				if q := s.queued(); len(q) > 0 {
					p := rapid.SampledFrom(q).Draw(rt, "queue")
					s.deliver(s.conns[p[0]], p[1])
				}
			}
		case 7:
			pendingRTO = finishPending(rt, s, pendingRTO, honest)
			s.quiesce()
			s.checkQuiet()
		}
	}
	finishPending(rt, s, pendingRTO, honest)
	s.quiesce()
	s.checkQuiet()
	for _, k := range sortedSubs(s.subs) {
		s.unsubscribe(k)
	}
	s.quiesce()
	s.checkQuiet()
}

// finishPending answers (or, every other one, abandons) the placements
// left waiting; one made stale by other operations falls back to a local
// insert. Placements cancelled by an unsubscribe are skipped.
func finishPending(rt *rapid.T, s *sim, ps []startedRTO, a assistant) []startedRTO {
	for i, st := range ps {
		m := s.routers[st.k.router]
		if !m.Placing(st.k.client, st.k.ref) {
			continue
		}
		var out Output
		var err error
		if i%2 == 1 {
			out, err = m.AbandonRTO(st.k.client, st.k.ref)
		} else {
			out, _, err = m.AnswerRTO(st.k.client, st.k.ref, rtoRound(st.p, []assistant{a}))
			for err == nil && m.Placing(st.k.client, st.k.ref) {
				s.dispatch(st.k.router, out)
				out, _, err = m.AnswerRTO(st.k.client, st.k.ref, rtoRound(st.p, []assistant{a}))
			}
		}
		if err != nil {
			rt.Fatal(err)
		}
		s.dispatch(st.k.router, out)
	}
	return nil
}

func TestRTOUnsubscribeWhilePlacing(t *testing.T) {
	s := newSim(t, []string{"a", "b"}, "poset")
	if err := s.connect(0, 1); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		s.subscribe(subKey{0, Client(10 + i), 1}, match.MustParse("x > "+string(rune('0'+i))))
	}
	s.quiesce()
	m := s.routers[0]
	p, _, err := m.StartSubscribeRTO(1, 1, match.MustParse("x > 7"), poset.RTOConfig{Policy: poset.Verify})
	if err != nil || p == nil {
		t.Fatalf("placement not started: %v", err)
	}
	before := m.Len()
	out, err := m.Unsubscribe(1, 1, match.MustParse("x > 7"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Sends) != 0 || len(out.Ready) != 0 || m.Len() != before || m.Placing(1, 1) {
		t.Fatalf("unsubscribing a placement in progress: %+v, table %d -> %d", out, before, m.Len())
	}
	if _, _, err := m.AnswerRTO(1, 1, nil); err == nil {
		t.Fatal("answers for a cancelled placement accepted")
	}
}
