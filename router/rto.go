package router

import (
	"context"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
	"github.com/sift-pubsub/sift/router/mesh"
)

// This file drives client-assisted placement (RTO and FF, issue 7 section
// 6) inside the matching loop: assisting clients offer help
// (AssistOffer), the loop sends them the vectors of a placement
// (RTOQuery) and hands their answers (RTOAnswer) to the mesh, which
// places, verifies or falls back (router/mesh/rto.go). FF claims
// (FFClaim) arrive just before their Subscribe. The protocol decisions
// live in mesh and poset; this is wiring: ids, timers, metrics.

// maxClaims bounds the FF claims a connection may have waiting for their
// Subscribe.
const maxClaims = 4096

// assistState is the matching loop's RTO/FF state.
type assistState struct {
	set        assistSettings
	assistants []ifaceID // offering RTO, in the order they offered
	next       int       // round-robin cursor into assistants
	run        *rtoRun   // the placement in progress (one at a time)
	nextQ      uint64
	byQ        map[uint64]rtoAsk
	claims     map[ifaceID]map[uint64][]uint64 // FF claims by connection and subscription
	post       func(loopMsg)                   // hands a message to the loop (timers)
}

// rtoRun is one subscription's placement through RTO.
type rtoRun struct {
	client  ifaceID
	sub     uint64
	p       *poset.Placement
	helpers []ifaceID        // the clients asked, one per answer slot
	answers [][]poset.Answer // per query, per helper
	missing int
	round   int
	qs      []uint64 // the query ids outstanding
	timer   *time.Timer
}

// rtoAsk says where the answer to one query id goes.
type rtoAsk struct {
	run       *rtoRun
	qi, slot  int
	helper    ifaceID
	round     int
	vectorLen int
}

func newAssistState(set assistSettings) *assistState {
	return &assistState{set: set, byQ: make(map[uint64]rtoAsk), claims: make(map[ifaceID]map[uint64][]uint64)}
}

// assistFromClient hands an assist message from client connection c to
// the matching loop (called by the connection's control reader).
func (r *Router) assistFromClient(ctx context.Context, c *conn, m wire.Message) error {
	id := c.id
	post := func(msg loopMsg) { r.send(context.Background(), msg) }
	ok := r.send(ctx, loopMsg{kind: msgQuery, query: func(l *matchLoop) {
		if l.assist == nil {
			return // no mesh: nothing to assist with
		}
		l.assist.post = post
		l.assistMessage(id, m)
	}})
	if !ok {
		return errStopped
	}
	return nil
}

// assistMessage handles AssistOffer, RTOAnswer and FFClaim from a client.
func (l *matchLoop) assistMessage(id ifaceID, m wire.Message) {
	a := l.assist
	c, ok := l.conns[id]
	if !ok {
		return
	}
	switch m := m.(type) {
	case *wire.AssistOffer:
		if m.Modes&wire.AssistRTO != 0 && a.set.on && !containsIface(a.assistants, id) {
			a.assistants = append(a.assistants, id)
			l.metrics.Assist.Assistants.Set(float64(len(a.assistants)))
		}
		if m.Modes&wire.AssistFF != 0 && len(a.set.fixed) > 0 {
			l.pushControl(c, wire.AppendFrame(nil, &wire.FFFixed{Gen: 1, Filters: filterTexts(a.set.fixed)}))
		}
	case *wire.FFClaim:
		if m.Gen != 1 || len(a.set.fixed) == 0 || len(a.claims[id]) >= maxClaims {
			return // against another fixed set, FF off, or too many waiting
		}
		if a.claims[id] == nil {
			a.claims[id] = make(map[uint64][]uint64)
		}
		a.claims[id][m.Sub] = m.Covering
	case *wire.RTOAnswer:
		l.rtoAnswer(id, m)
	}
}

// meshSubscribe installs a client subscription in the mesh: through FF
// when the client claimed fixed filters for it, through RTO when the
// policy is on and assistants are connected and no other placement is in
// progress, else by the router alone.
func (l *matchLoop) meshSubscribe(id ifaceID, sub uint64, f match.Filter) (mesh.Output, error) {
	a, c := l.assist, mesh.Client(id)
	if claim, ok := a.takeClaim(id, sub); ok && len(claim) == len(poset.NewBits(len(a.set.fixed))) {
		before := l.mesh.Counters().InsertTests
		out, st, err := l.mesh.SubscribeFF(c, sub, f, []poset.Bits{poset.Bits(claim)}, a.set.ff)
		if err == nil {
			l.metrics.Assist.Tests.WithLabelValues("done").Add(float64(l.mesh.Counters().InsertTests - before))
			l.metrics.Assist.Tests.WithLabelValues("saved").Add(float64(len(a.set.fixed)))
			l.metrics.Assist.Placements.WithLabelValues("ff", outcomeName(st.Fallback)).Inc()
		}
		return out, err
	}
	if helpers := a.pick(); helpers != nil && a.run == nil && a.set.on {
		p, out, err := l.mesh.StartSubscribeRTO(c, sub, f, a.set.rto)
		if err != nil || p == nil {
			return out, err
		}
		a.run = &rtoRun{client: id, sub: sub, p: p, helpers: helpers}
		l.rtoSend(a.run)
		return out, nil
	}
	before := l.mesh.Counters().InsertTests
	out, err := l.mesh.Subscribe(c, sub, f)
	l.metrics.Assist.Tests.WithLabelValues("local").Add(float64(l.mesh.Counters().InsertTests - before))
	return out, err
}

// pick returns the assistants for one placement, round robin, or nil if
// too few are connected.
func (a *assistState) pick() []ifaceID {
	k := max(a.set.rto.Clients, 1)
	if len(a.assistants) < k {
		return nil
	}
	out := make([]ifaceID, k)
	for i := range out {
		out[i] = a.assistants[(a.next+i)%len(a.assistants)]
	}
	a.next = (a.next + 1) % len(a.assistants)
	return out
}

func (a *assistState) takeClaim(id ifaceID, sub uint64) ([]uint64, bool) {
	c, ok := a.claims[id][sub]
	if ok {
		delete(a.claims[id], sub)
	}
	return c, ok
}

// rtoSend sends the placement's current queries to its helpers and arms
// the round's timer.
func (l *matchLoop) rtoSend(run *rtoRun) {
	a := l.assist
	qs := run.p.Queries()
	run.round++
	run.answers = make([][]poset.Answer, len(qs))
	run.missing, run.qs = len(qs)*len(run.helpers), run.qs[:0]
	for qi, q := range qs {
		run.answers[qi] = make([]poset.Answer, len(run.helpers))
		msg := &wire.RTOQuery{Filter: q.Text, Filters: q.Texts} // encoded below, before the next Answer
		for slot, h := range run.helpers {
			a.nextQ++
			msg.Q = a.nextQ
			a.byQ[msg.Q] = rtoAsk{run: run, qi: qi, slot: slot, helper: h, round: run.round, vectorLen: len(q.Filters)}
			run.qs = append(run.qs, msg.Q)
			if c, ok := l.conns[h]; ok {
				l.pushControl(c, wire.AppendFrame(nil, msg))
			}
		}
	}
	round, post := run.round, a.post
	if post != nil {
		run.timer = time.AfterFunc(a.set.timeout, func() {
			post(loopMsg{kind: msgQuery, query: func(l *matchLoop) { l.rtoTimeout(run, round) }})
		})
	}
}

// rtoAnswer takes one helper's answer; once a round is complete the mesh
// advances the placement.
func (l *matchLoop) rtoAnswer(from ifaceID, m *wire.RTOAnswer) {
	a := l.assist
	ask, ok := a.byQ[m.Q]
	if !ok || ask.helper != from || ask.run != a.run {
		return // late, cancelled, or not this client's to answer
	}
	delete(a.byQ, m.Q)
	run := ask.run
	run.answers[ask.qi][ask.slot] = poset.Answer{Up: m.Up, Down: m.Down, Overlap: m.Overlap}
	if ask.slot == 0 {
		l.metrics.Assist.Tests.WithLabelValues("saved").Add(float64(2 * ask.vectorLen))
	}
	if run.missing--; run.missing > 0 {
		return
	}
	run.stop()
	before := l.mesh.Counters().InsertTests
	out, outcome, err := l.mesh.AnswerRTO(mesh.Client(run.client), run.sub, run.answers)
	if err != nil {
		return // cannot happen: the run is the mesh's placement in progress
	}
	if outcome == mesh.RTOPending {
		l.rtoSend(run)
		return
	}
	l.rtoEnd(outcome == mesh.RTOFallback, before)
	l.apply(out)
}

// rtoTimeout abandons a round that is still waiting.
func (l *matchLoop) rtoTimeout(run *rtoRun, round int) {
	if l.assist.run == run && run.round == round && run.missing > 0 {
		l.rtoAbandon()
	}
}

// rtoAbandon lets the router place the filter of the run in progress.
func (l *matchLoop) rtoAbandon() {
	run := l.assist.run
	before := l.mesh.Counters().InsertTests
	out, err := l.mesh.AbandonRTO(mesh.Client(run.client), run.sub)
	l.rtoEnd(true, before)
	if err == nil {
		l.apply(out)
	}
}

// rtoEnd forgets the run in progress and counts how it ended.
func (l *matchLoop) rtoEnd(fallback bool, testsBefore uint64) {
	a := l.assist
	a.run.stop()
	for _, q := range a.run.qs {
		delete(a.byQ, q)
	}
	a.run = nil
	l.metrics.Assist.Tests.WithLabelValues("done").Add(float64(l.mesh.Counters().InsertTests - testsBefore))
	l.metrics.Assist.Placements.WithLabelValues("rto", outcomeName(fallback)).Inc()
}

func (run *rtoRun) stop() {
	if run.timer != nil {
		run.timer.Stop()
	}
}

// assistUnsubscribe forgets the run of a subscription removed before it
// was placed (the mesh drops the placement itself).
func (l *matchLoop) assistUnsubscribe(id ifaceID, sub uint64) {
	a := l.assist
	if a == nil {
		return
	}
	delete(a.claims[id], sub)
	if a.run != nil && a.run.client == id && a.run.sub == sub {
		a.run.stop()
		for _, q := range a.run.qs {
			delete(a.byQ, q)
		}
		a.run = nil
	}
}

// assistDetach forgets a connection that went away: its claims, its offer,
// a run placing its own subscription (the mesh drops it with the client),
// and a run waiting for its answers (the router places that filter
// itself).
func (l *matchLoop) assistDetach(id ifaceID) {
	a := l.assist
	if a == nil {
		return
	}
	delete(a.claims, id)
	if i := indexIface(a.assistants, id); i >= 0 {
		a.assistants = append(a.assistants[:i], a.assistants[i+1:]...)
		a.next = 0
		l.metrics.Assist.Assistants.Set(float64(len(a.assistants)))
	}
	switch {
	case a.run == nil:
	case a.run.client == id:
		l.assistUnsubscribe(id, a.run.sub)
	case containsIface(a.run.helpers, id):
		l.rtoAbandon()
	}
}

func outcomeName(fallback bool) string {
	if fallback {
		return "fallback"
	}
	return "placed"
}

func filterTexts(fs []match.Filter) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func indexIface(ids []ifaceID, id ifaceID) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

func containsIface(ids []ifaceID, id ifaceID) bool { return indexIface(ids, id) >= 0 }
