package poset

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// SubscribeClaimed is Subscribe with the placement claimed by the
// subscriber (rto_claim.go): parent is a filter that interface from
// subscribed earlier and claims covers f. The claim is verified with one
// covering test; a false one, or a parent from does not hold, is refused
// and f is placed by the table itself. Either way the updates are those
// of Subscribe: a refused claim costs the router its own insert, never a
// filter forwarded or routed wrongly. Only a shallow table takes claims.
func (t *Table) SubscribeClaimed(from Iface, f, parent match.Filter) ([]Update, ClaimStats, error) {
	if _, shallow := t.s.alg.(shallowAlg); !shallow {
		return nil, ClaimStats{}, fmt.Errorf("subscribe: %s table: %w", t.s.name, errClaimStructure)
	}
	k := subKey{from, f.String()}
	if t.again(k) {
		return nil, ClaimStats{}, nil
	}
	var p *node
	pk := subKey{from, parent.String()}
	if ps, ok := t.lookup(pk); ok {
		if p = ps.n; p == nil {
			p = t.s.nodeOf(ps.id, pk.text)
		}
	}
	id := t.nextID
	n, st, err := t.s.addClaimed(id, from, f, k.text, p)
	if err != nil {
		return nil, st, fmt.Errorf("subscribe: %w", err)
	}
	t.nextID++
	return t.installed(k, id, n), st, nil
}

// TakesClaims reports whether the table places claimed subscriptions
// (SubscribeClaimed): only a shallow table does.
func (t *Table) TakesClaims() bool {
	_, shallow := t.s.alg.(shallowAlg)
	return shallow
}
