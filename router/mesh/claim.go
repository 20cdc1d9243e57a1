package mesh

import (
	"fmt"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// SubscribeClaimed is Subscribe with the placement claimed by the client:
// parent is the filter of one of its earlier subscriptions, which it claims
// covers f (poset.Table.SubscribeClaimed: the table checks the claim and
// places f itself when it is false). A table that takes no claims places
// f itself, the claim unused. The output is Subscribe's.
func (m *Mesh) SubscribeClaimed(c Client, ref uint64, f, parent match.Filter) (Output, poset.ClaimStats, error) {
	if !m.table.TakesClaims() {
		out, err := m.Subscribe(c, ref, f)
		return out, poset.ClaimStats{}, err
	}
	if m.placing[clientRef{c, ref}] != nil {
		return Output{}, poset.ClaimStats{}, fmt.Errorf("client %d: subscription %d is being placed", c, ref)
	}
	us, st, err := m.table.SubscribeClaimed(m.clientIface(c), f, parent)
	if err != nil {
		panic(fmt.Sprintf("mesh: routing table refused %s: %v", f, err)) // as subscribe: a broken invariant
	}
	return m.installed(c, ref, us), st, nil
}

// TakesClaims reports whether the routing table uses claimed placements.
func (m *Mesh) TakesClaims() bool { return m.table.TakesClaims() }

// SubscribeBatchClaimed is SubscribeBatch with claimed placements: for
// the filter fs[i], parent(i) returns the filter the client claims covers
// it, if it claims one (see SubscribeClaimed). It returns how many claims
// were placed and how many refused. A table that takes no claims places
// every filter itself.
func (m *Mesh) SubscribeBatchClaimed(c Client, first uint64, fs []match.Filter, parent func(i int) (match.Filter, bool)) (Output, int, int, error) {
	if !m.table.TakesClaims() {
		out, err := m.SubscribeBatch(c, first, fs)
		return out, 0, 0, err
	}
	var out Output
	if len(fs) == 0 {
		return out, 0, 0, fmt.Errorf("client %d: empty subscription batch", c)
	}
	d := delta{}
	from := m.clientIface(c)
	placed, refused := 0, 0
	for i, f := range fs {
		p, ok := parent(i)
		if !ok {
			m.subscribe(d, from, f)
			continue
		}
		us, st, err := m.table.SubscribeClaimed(from, f, p)
		if err != nil {
			panic(fmt.Sprintf("mesh: routing table refused %s: %v", f, err))
		}
		d.apply(us)
		if st.Placed {
			placed++
		} else if st.Refused {
			refused++
		}
	}
	m.flush(d, &out)
	m.barrier(&out, 0)
	m.wait(pending{client: c, ref: first, batch: true}, 0, &out)
	return out, placed, refused, nil
}
