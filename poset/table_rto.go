package poset

import (
	"errors"
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// StartSubscribeRTO begins Subscribe(from, f) with the placement offloaded
// to clients (RTO). It returns nil when nothing needs placing (the same
// subscription is present and is only counted again). Otherwise the caller
// drives the returned Placement to Done, then calls FinishSubscribeRTO for
// the updates. If the placement fails as stale (the table changed
// meanwhile), the caller drops it with AbortSubscribeRTO and starts again.
func (t *Table) StartSubscribeRTO(from Iface, f match.Filter, cfg RTOConfig) (*Placement, error) {
	k := subKey{from, f.String()}
	if t.again(k) {
		return nil, nil
	}
	for _, pk := range t.pending {
		if pk == k {
			return nil, fmt.Errorf("subscribe: a placement of %s from interface %d is already in progress", f, from)
		}
	}
	p, err := t.s.StartRTO(t.nextID, from, f, cfg)
	if err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	t.nextID++
	if t.pending == nil {
		t.pending = make(map[*Placement]subKey)
	}
	t.pending[p] = k
	return p, nil
}

// FinishSubscribeRTO records a subscription whose placement is done and
// returns the updates for the neighbours, as Subscribe does.
func (t *Table) FinishSubscribeRTO(p *Placement) ([]Update, error) {
	k, ok := t.pending[p]
	if !ok {
		return nil, errors.New("subscribe: unknown placement")
	}
	if !p.Done() {
		return nil, errors.New("subscribe: placement not done")
	}
	delete(t.pending, p)
	if s, ok := t.lookup(k); ok {
		// Subscribed meanwhile, the same filter from the same interface
		// (Subscribe joined an equivalent node, leaving the placement
		// valid): counted again, as Subscribe counts a repeat, and the
		// placement's own entry leaves the structure, which would
		// otherwise hold it with no subscription of the table naming it.
		s.count++
		t.put(k, s)
		return t.uninstall(p.e.id, k.text)
	}
	n := t.s.nodeOf(p.e.id, k.text)
	return t.installed(k, p.e.id, n), nil
}

// AbortSubscribeRTO forgets a placement that will not be finished.
func (t *Table) AbortSubscribeRTO(p *Placement) { delete(t.pending, p) }
