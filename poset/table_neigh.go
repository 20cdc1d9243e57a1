package poset

import (
	"fmt"
	"slices"
)

// AddNeighbour makes interface n a neighbour router from now on and
// returns the update that brings it up to date: every filter the table
// forwards to n (its forwarding set, in canonical order, all in Add). Its
// cost is the part of the structure that is not covered by a subscription
// from another interface: for a new neighbour with no subscriptions yet,
// the roots. Adding a neighbour twice is an error and changes nothing.
//
// Subscriptions n made while it was not a neighbour stay; from now on they
// are never forwarded back to n.
func (t *Table) AddNeighbour(n Iface) (Update, error) {
	if slices.Contains(t.neigh, n) {
		return Update{}, fmt.Errorf("routing table: %d is a neighbour already", n)
	}
	i, _ := slices.BinarySearch(t.neigh, n)
	t.neigh = slices.Insert(t.neigh, i, n)
	fs := newFwdSet()
	t.fwd[n] = fs
	for _, w := range t.topFor(n) {
		if f, ok := t.desired(w, n); ok {
			fs.put(w, f)
		}
	}
	if t.cfg.Merge {
		m := newMerger()
		for _, f := range t.unmerged(n) {
			m.add(f)
		}
		m.flush()
		t.merged[n] = m
	}
	return Update{To: n, Add: t.Forwarded(n)}, nil
}

// RemoveNeighbour stops treating n as a neighbour router: its forwarding
// set is forgotten and nothing is computed for it any more. Subscriptions
// from n stay in the table (a router unsubscribes what a lost neighbour
// sent first, then removes it); removing an interface that is not a
// neighbour is an error and changes nothing.
func (t *Table) RemoveNeighbour(n Iface) error {
	i, ok := slices.BinarySearch(t.neigh, n)
	if !ok {
		return fmt.Errorf("routing table: %d is not a neighbour", n)
	}
	t.neigh = slices.Delete(t.neigh, i, i+1)
	delete(t.fwd, n)
	delete(t.merged, n)
	return nil
}

// Neighbours returns the current neighbours in increasing order.
func (t *Table) Neighbours() []Iface { return slices.Clone(t.neigh) }

// topFor returns the nodes that may forward to n: those reached from the
// roots descending only through nodes whose subscriptions all come from
// n (a subscription from anyone else blocks everything below it). Each
// node is listed once; desired still checks every ancestor, since in the
// poset a node can be reached through one parent and blocked by another.
func (t *Table) topFor(n Iface) []*node {
	c := t.s
	c.newEpoch()
	var out []*node
	stack := slices.Clone(c.roots.members())
	for len(stack) > 0 {
		w := c.touch(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		if w.queued {
			continue
		}
		w.queued = true
		out = append(out, w)
		if onlyFrom(w, n) {
			stack = append(stack, w.children()...)
		}
	}
	return out
}

// onlyFrom reports whether every subscription of w comes from n (true for
// a node with none, such as a pinned fixed filter).
func onlyFrom(w *node, n Iface) bool {
	for e := range w.subs {
		if e.from != n {
			return false
		}
	}
	return true
}
