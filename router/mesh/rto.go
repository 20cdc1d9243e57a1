package mesh

import (
	"errors"
	"fmt"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// placing is a client subscription whose table placement is offloaded to
// assisting clients (RTO) and not finished yet.
type placing struct {
	p *poset.Placement
	f match.Filter
}

type clientRef struct {
	c   Client
	ref uint64
}

// RTOOutcome says how an offloaded placement ended.
type RTOOutcome uint8

const (
	// RTOPending: the placement waits for more answers.
	RTOPending RTOOutcome = iota
	// RTOPlaced: placed from the answers (verified when the policy says so).
	RTOPlaced
	// RTOFallback: the answers failed verification, were malformed, or the
	// table changed meanwhile, or the caller gave up on them; the router
	// inserted the filter itself.
	RTOFallback
)

// StartSubscribeRTO is Subscribe with the routing-table placement
// offloaded (RTO) under cfg. When no client work is needed (an equal
// subscription is present, the table is empty, ...) the subscription is
// installed at once, as by Subscribe, and the returned placement is nil.
// Otherwise the caller sends the placement's Queries to Clients() assisting
// clients each and hands their answers to AnswerRTO; the subscription is
// not in the table (not forwarded, not routed to) until then, and Ready
// comes after. A ref being placed already is an error (the caller keeps
// the subscriptions, as for Subscribe).
func (m *Mesh) StartSubscribeRTO(c Client, ref uint64, f match.Filter, cfg poset.RTOConfig) (*poset.Placement, Output, error) {
	if m.placing[clientRef{c, ref}] != nil {
		return nil, Output{}, fmt.Errorf("client %d: subscription %d is being placed", c, ref)
	}
	p, err := m.table.StartSubscribeRTO(m.clientIface(c), f, cfg)
	if err != nil {
		return nil, Output{}, fmt.Errorf("client %d subscription %d: %w", c, ref, err)
	}
	if p == nil { // counted again: nothing to place
		return nil, m.installed(c, ref, nil), nil
	}
	if p.Done() {
		us, err := m.table.FinishSubscribeRTO(p)
		if err != nil {
			panic(fmt.Sprintf("mesh: finishing a done placement: %v", err))
		}
		return nil, m.installed(c, ref, us), nil
	}
	if m.placing == nil {
		m.placing = make(map[clientRef]*placing)
	}
	m.placing[clientRef{c, ref}] = &placing{p: p, f: f}
	return p, Output{}, nil
}

// AnswerRTO hands the answers to the current queries of subscription
// ref's placement (per query, Clients() answers). When that completes the
// placement, or when the answers cannot be used (malformed, or the table
// changed since the queries were made), the subscription is installed and
// the output carries what to send, as for Subscribe; otherwise the
// placement's next Queries are due. An unknown placement is an error.
func (m *Mesh) AnswerRTO(c Client, ref uint64, answers [][]poset.Answer) (Output, RTOOutcome, error) {
	pl := m.placing[clientRef{c, ref}]
	if pl == nil {
		return Output{}, 0, fmt.Errorf("client %d: no placement for subscription %d", c, ref)
	}
	done, err := pl.p.Answer(answers)
	if err != nil {
		return m.fallback(c, ref, pl), RTOFallback, nil
	}
	if !done {
		return Output{}, RTOPending, nil
	}
	delete(m.placing, clientRef{c, ref})
	us, err := m.table.FinishSubscribeRTO(pl.p)
	if err != nil {
		panic(fmt.Sprintf("mesh: finishing a done placement: %v", err))
	}
	outcome := RTOPlaced
	if pl.p.Stats().Fallback {
		outcome = RTOFallback
	}
	return m.installed(c, ref, us), outcome, nil
}

// AbandonRTO gives up on the answers for subscription ref (an assisting
// client timed out or went away): the router places the filter itself.
func (m *Mesh) AbandonRTO(c Client, ref uint64) (Output, error) {
	pl := m.placing[clientRef{c, ref}]
	if pl == nil {
		return Output{}, errors.New("mesh: no such placement")
	}
	return m.fallback(c, ref, pl), nil
}

// Placing reports whether subscription ref of client c waits for RTO
// answers.
func (m *Mesh) Placing(c Client, ref uint64) bool { return m.placing[clientRef{c, ref}] != nil }

// SubscribeFF is Subscribe with the insertion started below the fixed
// filters the claims say cover f (FF; see poset.Table.SubscribeFF).
func (m *Mesh) SubscribeFF(c Client, ref uint64, f match.Filter, claims []poset.Bits, policy poset.Policy) (Output, poset.FFStats, error) {
	if m.placing[clientRef{c, ref}] != nil {
		return Output{}, poset.FFStats{}, fmt.Errorf("client %d: subscription %d is being placed", c, ref)
	}
	us, st, err := m.table.SubscribeFF(m.clientIface(c), f, claims, policy)
	if err != nil {
		return Output{}, st, fmt.Errorf("client %d subscription %d: %w", c, ref, err)
	}
	return m.installed(c, ref, us), st, nil
}

// Pin publishes fixed filters (FF) in the routing table.
func (m *Mesh) Pin(fixed []match.Filter) error { return m.table.Pin(fixed) }

// Fixed returns the fixed filters, in pinning order.
func (m *Mesh) Fixed() []match.Filter { return m.table.Fixed() }

// Counters returns the routing table's work counters (covering tests per
// insert, placements included).
func (m *Mesh) Counters() poset.Counters { return m.table.Counters() }

// fallback drops a placement and inserts its filter the normal way.
func (m *Mesh) fallback(c Client, ref uint64, pl *placing) Output {
	delete(m.placing, clientRef{c, ref})
	m.table.AbortSubscribeRTO(pl.p)
	d := delta{}
	m.subscribe(d, m.clientIface(c), pl.f)
	var out Output
	m.flush(d, &out)
	m.barrier(&out, 0)
	m.wait(pending{client: c, ref: ref}, 0, &out)
	return out
}

// abortPlacing forgets the placement of a subscription being removed; it
// reports whether there was one (the table then holds nothing to remove).
func (m *Mesh) abortPlacing(c Client, ref uint64) bool {
	pl := m.placing[clientRef{c, ref}]
	if pl == nil {
		return false
	}
	delete(m.placing, clientRef{c, ref})
	m.table.AbortSubscribeRTO(pl.p)
	return true
}

// installed finishes a client subscription whose table updates are us:
// the Routes to send, barriers, and the Ready to wait for.
func (m *Mesh) installed(c Client, ref uint64, us []poset.Update) Output {
	var out Output
	d := delta{}
	d.apply(us)
	m.flush(d, &out)
	m.barrier(&out, 0)
	m.wait(pending{client: c, ref: ref}, 0, &out)
	return out
}
