package poset

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
)

// Pin publishes fixed filters (FF) in the table's structure; see Pin on
// Poset and Forest. Pinning forwards nothing.
func (t *Table) Pin(fixed []match.Filter) error { return t.s.Pin(fixed) }

// Fixed returns the table's fixed filters, in pinning order.
func (t *Table) Fixed() []match.Filter { return t.s.Fixed() }

// SubscribeFF is Subscribe with the insertion started below the fixed
// filters that the clients' claims (FixedCovering bit vectors) say cover
// f, under the given policy; see AddFF. It returns the same kind of updates
// as Subscribe.
func (t *Table) SubscribeFF(from Iface, f match.Filter, claims []Bits, policy Policy) ([]Update, FFStats, error) {
	k := subKey{from, f.String()}
	if t.again(k) {
		return nil, FFStats{}, nil
	}
	id := t.nextID
	st, err := t.s.AddFF(id, from, f, claims, policy)
	if err != nil {
		return nil, st, fmt.Errorf("subscribe: %w", err)
	}
	t.nextID++
	n := t.s.nodeOf(id, k.text)
	return t.installed(k, id, n), st, nil
}
