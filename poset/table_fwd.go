package poset

import (
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// refresh recomputes the forwarding sets of the nodes an operation may have
// changed and records the differences in d. Those nodes are the starts (the
// node operated on, or the children of a removed node) and their
// descendants reachable through nodes held by a single interface: a node
// with subscriptions from two interfaces blocks, for every neighbour, all
// the nodes below it, before and after the operation alike.
func (t *Table) refresh(d diff, starts []*node) {
	for _, w := range t.region(starts) {
		for _, nb := range t.neigh {
			want, ok := t.desired(w, nb)
			fs := t.fwd[nb]
			have, had := fs.get(w)
			if had && (!ok || !have.Equal(want)) {
				fs.del(w)
				d.remove(nb, have)
			}
			if ok && (!had || !have.Equal(want)) {
				fs.put(w, want)
				d.add(nb, want)
			}
		}
	}
}

// region returns the starts and their descendants reachable through
// nodes held by at most one interface, each once, in visiting order.
func (t *Table) region(starts []*node) []*node {
	seen := make(map[*node]bool)
	var out []*node
	queue := slices.Clone(starts)
	expand := make(map[*node]bool, len(starts))
	for _, s := range starts {
		expand[s] = true
	}
	for i := 0; i < len(queue); i++ {
		w := queue[i]
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if expand[w] || len(w.ifaces(nil)) <= 1 {
			queue = append(queue, w.children()...)
		}
	}
	return out
}

// desired returns the filter node w should forward to neighbour nb: the
// filter of its lowest-id subscription from another interface, provided no
// ancestor holds a subscription from an interface other than nb.
func (t *Table) desired(w *node, nb Iface) (match.Filter, bool) {
	anc := t.ancestorIfaces(w)
	if len(anc) > 1 || len(anc) == 1 && anc[0] != nb {
		return match.Filter{}, false
	}
	var best entry
	found := false
	for e := range w.subs {
		if e.from != nb && (!found || e.id < best.id) {
			best, found = e, true
		}
	}
	if !found {
		return match.Filter{}, false
	}
	return t.s.entryFilter(w, best), true
}

// ancestorIfaces returns the distinct interfaces subscribed at w's
// ancestors, stopping as soon as it has found two.
func (t *Table) ancestorIfaces(w *node) []Iface {
	c := t.s
	c.newEpoch()
	var ifs []Iface
	stack := append([]*node(nil), w.parents()...)
	for len(stack) > 0 && len(ifs) < 2 {
		p := c.touch(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		if p.visited {
			continue
		}
		p.visited = true
		ifs = p.ifaces(ifs)
		stack = append(stack, p.parents()...)
	}
	return ifs
}

// finish turns the accumulated differences into updates, merging the
// forwarded filters first when configured: each changed neighbour's merger
// takes the unmerged removals and additions and returns the merged ones.
func (t *Table) finish(d diff) []Update {
	us := d.updates()
	if !t.cfg.Merge {
		return us
	}
	md := diff{}
	for _, u := range us {
		m := t.merged[u.To]
		for _, f := range u.Remove {
			m.remove(f)
		}
		for _, f := range u.Add {
			m.add(f)
		}
		if rm, add := m.flush(); len(rm)+len(add) > 0 {
			md[u.To] = &Update{To: u.To, Remove: rm, Add: add}
		}
	}
	return md.updates()
}

// unmerged returns the unmerged forwarding set of nb in canonical order.
func (t *Table) unmerged(nb Iface) []match.Filter {
	out := t.fwd[nb].filters(nil)
	slices.SortFunc(out, match.Filter.Compare)
	return out
}
