package core

import (
	"fmt"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Client-assisted placement (RTO and FF): assisting clients offer help
// (AssistOffer), the core sends them the vectors of a placement
// (RTOQuery) and hands their answers (RTOAnswer) to the mesh, which
// places, verifies or falls back (router/mesh/rto.go). FF claims
// (FFClaim) arrive just before their Subscribe. The protocol decisions
// live in mesh and poset; this is their bookkeeping: who assists, which
// query id belongs to which answer slot, and the deadline of each round.

// maxClaims bounds the FF claims a connection may have waiting for their
// Subscribe.
const maxClaims = 4096

// AssistSettings is the checked RTO/FF configuration
// (router.AssistConfig resolved).
type AssistSettings struct {
	On      bool // RTO is not off
	RTO     poset.RTOConfig
	FF      poset.Policy
	Fixed   []match.Filter // FF's fixed filters; empty: FF off
	Timeout time.Duration  // how long a round waits for its answers
}

// assist is the core's RTO/FF state.
type assist struct {
	set        AssistSettings
	assistants []ConnID // offering RTO, in the order they offered
	next       int      // round-robin cursor into assistants
	run        *rtoRun  // the placement in progress (one at a time)
	nextQ      uint64
	byQ        map[uint64]rtoAsk
	claims     map[ConnID]map[uint64][]uint64 // FF claims by connection and subscription
	parents    map[ConnID]map[uint64][]uint64 // placement claims by connection and first subscription (claim.go)
}

// rtoRun is one subscription's placement through RTO.
type rtoRun struct {
	client   ConnID
	sub      uint64
	p        *poset.Placement
	helpers  []ConnID         // the clients asked, one per answer slot
	answers  [][]poset.Answer // per query, per helper
	missing  int
	round    int
	qs       []uint64  // the query ids outstanding
	deadline time.Time // the round is abandoned at this time (Tick)
}

// rtoAsk says where the answer to one query id goes.
type rtoAsk struct {
	run       *rtoRun
	qi, slot  int
	helper    ConnID
	round     int
	vectorLen int
}

func newAssist(set AssistSettings) *assist {
	return &assist{set: set, byQ: make(map[uint64]rtoAsk), claims: make(map[ConnID]map[uint64][]uint64),
		parents: make(map[ConnID]map[uint64][]uint64)}
}

// clientFrame handles AssistOffer, RTOAnswer, FFClaim and PlaceClaim from
// a client.
func (c *Core) clientFrame(in ClientFrame) error {
	switch in.Msg.(type) {
	case *wire.AssistOffer, *wire.FFClaim, *wire.RTOAnswer, *wire.PlaceClaim:
	default:
		return fmt.Errorf("router core: client %d: %T is not a core input", in.Conn, in.Msg)
	}
	a := c.assist
	if a == nil {
		return nil // no mesh: nothing to assist with
	}
	id := in.Conn
	switch m := in.Msg.(type) {
	case *wire.AssistOffer:
		if m.Modes&wire.AssistRTO != 0 && a.set.On && !containsConn(a.assistants, id) {
			a.assistants = append(a.assistants, id)
			c.metric(Assistants, uint64(len(a.assistants)))
		}
		if m.Modes&wire.AssistFF != 0 && len(a.set.Fixed) > 0 {
			c.frame(id, wire.AppendFrame(nil, &wire.FFFixed{Gen: 1, Filters: filterTexts(a.set.Fixed)}))
		}
	case *wire.FFClaim:
		if m.Gen != 1 || len(a.set.Fixed) == 0 || len(a.claims[id]) >= maxClaims {
			return nil // against another fixed set, FF off, or too many waiting
		}
		if a.claims[id] == nil {
			a.claims[id] = make(map[uint64][]uint64)
		}
		a.claims[id][m.Sub] = m.Covering
	case *wire.RTOAnswer:
		c.rtoAnswer(id, m)
	case *wire.PlaceClaim:
		a.claimFrom(id, m) // claim.go
	}
	return nil
}

// place installs client id's subscription sub in the mesh: below the
// parent the client claimed for it, when it did and the table takes
// claims (claim.go); through FF when the client claimed fixed filters for
// it; through RTO when the policy is on, enough assistants are connected
// and no other placement is in progress; else by the router alone.
func (c *Core) place(id ConnID, sub uint64, f match.Filter) error {
	if done, err := c.placeClaimed(id, sub, f); done || err != nil {
		return err
	}
	a, cl := c.assist, mesh.Client(id)
	if claim, ok := a.takeClaim(id, sub); ok && len(claim) == len(poset.NewBits(len(a.set.Fixed))) {
		before := c.mesh.Counters().InsertTests
		out, st, err := c.mesh.SubscribeFF(cl, sub, f, []poset.Bits{poset.Bits(claim)}, a.set.FF)
		if err != nil {
			return err
		}
		c.metric(TestsDone, c.mesh.Counters().InsertTests-before)
		c.metric(TestsSaved, uint64(len(a.set.Fixed)))
		c.metric(placement(false, st.Fallback), 1)
		c.apply(out)
		return nil
	}
	if helpers := a.pick(); helpers != nil && a.run == nil && a.set.On {
		p, out, err := c.mesh.StartSubscribeRTO(cl, sub, f, a.set.RTO)
		if err != nil {
			return err
		}
		if p == nil {
			c.apply(out)
			return nil
		}
		a.run = &rtoRun{client: id, sub: sub, p: p, helpers: helpers}
		c.rtoSend(a.run)
		c.apply(out)
		return nil
	}
	before := c.mesh.Counters().InsertTests
	out, err := c.mesh.Subscribe(cl, sub, f)
	c.metric(TestsLocal, c.mesh.Counters().InsertTests-before)
	if err != nil {
		return err
	}
	c.apply(out)
	return nil
}

// placement is the metric of a placement's outcome.
func placement(rto, fallback bool) MetricKind {
	switch {
	case rto && fallback:
		return FallbackRTO
	case rto:
		return PlacedRTO
	case fallback:
		return FallbackFF
	}
	return PlacedFF
}

// pick returns the assistants for one placement, round robin, or nil if
// too few are connected.
func (a *assist) pick() []ConnID {
	k := max(a.set.RTO.Clients, 1)
	if len(a.assistants) < k {
		return nil
	}
	out := make([]ConnID, k)
	for i := range out {
		out[i] = a.assistants[(a.next+i)%len(a.assistants)]
	}
	a.next = (a.next + 1) % len(a.assistants)
	return out
}

func (a *assist) takeClaim(id ConnID, sub uint64) ([]uint64, bool) {
	c, ok := a.claims[id][sub]
	if ok {
		delete(a.claims[id], sub)
	}
	return c, ok
}

// rtoSend sends the placement's current queries to its helpers and sets
// the round's deadline, Timeout after the core's clock.
func (c *Core) rtoSend(run *rtoRun) {
	a := c.assist
	qs := run.p.Queries()
	run.round++
	run.answers = make([][]poset.Answer, len(qs))
	run.missing, run.qs = len(qs)*len(run.helpers), run.qs[:0]
	for qi, q := range qs {
		run.answers[qi] = make([]poset.Answer, len(run.helpers))
		msg := &wire.RTOQuery{Filter: q.Text, Filters: q.Texts} // encoded below, before the next Q
		for slot, h := range run.helpers {
			a.nextQ++
			msg.Q = a.nextQ
			a.byQ[msg.Q] = rtoAsk{run: run, qi: qi, slot: slot, helper: h, round: run.round, vectorLen: len(q.Filters)}
			run.qs = append(run.qs, msg.Q)
			c.frame(h, wire.AppendFrame(nil, msg))
		}
	}
	run.deadline = c.now.Add(a.set.Timeout)
}

// rtoAnswer takes one helper's answer; once a round is complete the mesh
// advances the placement.
func (c *Core) rtoAnswer(from ConnID, m *wire.RTOAnswer) {
	a := c.assist
	ask, ok := a.byQ[m.Q]
	if !ok || ask.helper != from || ask.run != a.run {
		return // late, cancelled, or not this client's to answer
	}
	delete(a.byQ, m.Q)
	run := ask.run
	run.answers[ask.qi][ask.slot] = poset.Answer{Up: m.Up, Down: m.Down, Overlap: m.Overlap}
	if ask.slot == 0 {
		c.metric(TestsSaved, uint64(2*ask.vectorLen))
	}
	if run.missing--; run.missing > 0 {
		return
	}
	before := c.mesh.Counters().InsertTests
	out, outcome, err := c.mesh.AnswerRTO(mesh.Client(run.client), run.sub, run.answers)
	if err != nil {
		return // cannot happen: the run is the mesh's placement in progress
	}
	if outcome == mesh.RTOPending {
		c.rtoSend(run)
		return
	}
	c.rtoEnd(outcome == mesh.RTOFallback, before)
	c.apply(out)
}

// assistTick abandons a round still waiting at its deadline.
func (c *Core) assistTick() {
	if a := c.assist; a != nil && a.run != nil && a.run.missing > 0 && !c.now.Before(a.run.deadline) {
		c.rtoAbandon()
	}
}

// assistDeadline is the deadline of the round in progress.
func (c *Core) assistDeadline() (time.Time, bool) {
	if a := c.assist; a != nil && a.run != nil && a.run.missing > 0 {
		return a.run.deadline, true
	}
	return time.Time{}, false
}

// rtoAbandon lets the router place the filter of the run in progress.
func (c *Core) rtoAbandon() {
	run := c.assist.run
	before := c.mesh.Counters().InsertTests
	out, err := c.mesh.AbandonRTO(mesh.Client(run.client), run.sub)
	c.rtoEnd(true, before)
	if err == nil {
		c.apply(out)
	}
}

// rtoEnd forgets the run in progress and counts how it ended.
func (c *Core) rtoEnd(fallback bool, testsBefore uint64) {
	a := c.assist
	for _, q := range a.run.qs {
		delete(a.byQ, q)
	}
	a.run = nil
	c.metric(TestsDone, c.mesh.Counters().InsertTests-testsBefore)
	c.metric(placement(true, fallback), 1)
}

// assistUnsubscribed forgets the claim of a subscription removed, and
// its run if it was removed before it was placed (the mesh drops the
// placement itself).
func (c *Core) assistUnsubscribed(conn ConnID, sub uint64) {
	a := c.assist
	if a == nil {
		return
	}
	delete(a.claims[conn], sub)
	delete(a.parents[conn], sub)
	if a.run != nil && a.run.client == conn && a.run.sub == sub {
		for _, q := range a.run.qs {
			delete(a.byQ, q)
		}
		a.run = nil
	}
}

// assistDetached forgets a connection that went away: its claims, its
// offer, a run placing its own subscription (the mesh drops it with the
// client), and a run waiting for its answers (the router places that
// filter itself).
func (c *Core) assistDetached(id ConnID) {
	a := c.assist
	if a == nil {
		return
	}
	delete(a.claims, id)
	delete(a.parents, id)
	if i := indexConn(a.assistants, id); i >= 0 {
		a.assistants = append(a.assistants[:i], a.assistants[i+1:]...)
		a.next = 0
		c.metric(Assistants, uint64(len(a.assistants)))
	}
	switch {
	case a.run == nil:
	case a.run.client == id:
		c.assistUnsubscribed(id, a.run.sub)
	case containsConn(a.run.helpers, id):
		c.rtoAbandon()
	}
}

func filterTexts(fs []match.Filter) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func indexConn(ids []ConnID, id ConnID) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

func containsConn(ids []ConnID, id ConnID) bool { return indexConn(ids, id) >= 0 }
