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
			have, had := t.fwd[nb][w]
			if had && (!ok || !have.Equal(want)) {
				delete(t.fwd[nb], w)
				d.remove(nb, have)
			}
			if ok && (!had || !have.Equal(want)) {
				t.fwd[nb][w] = want
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
			queue = append(queue, w.children...)
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
	var best *entry
	for i := range w.entries {
		e := &w.entries[i]
		if e.from != nb && (best == nil || e.id < best.id) {
			best = e
		}
	}
	if best == nil {
		return match.Filter{}, false
	}
	return best.f, true
}

// ancestorIfaces returns the distinct interfaces subscribed at w's
// ancestors, stopping as soon as it has found two.
func (t *Table) ancestorIfaces(w *node) []Iface {
	c := t.s
	c.newEpoch()
	var ifs []Iface
	stack := append([]*node(nil), w.parents...)
	for len(stack) > 0 && len(ifs) < 2 {
		p := c.touch(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		if p.visited {
			continue
		}
		p.visited = true
		ifs = p.ifaces(ifs)
		stack = append(stack, p.parents...)
	}
	return ifs
}

// finish turns the accumulated differences into updates, merging the
// forwarded filters first when configured.
func (t *Table) finish(d diff) []Update {
	if !t.cfg.Merge {
		return d.updates()
	}
	md := diff{}
	for nb := range d {
		cur := t.unmerged(nb)
		merged := mergeFilters(cur)
		old := t.sent[nb]
		for _, f := range old {
			if !slices.ContainsFunc(merged, f.Equal) {
				md.remove(nb, f)
			}
		}
		for _, f := range merged {
			if !slices.ContainsFunc(old, f.Equal) {
				md.add(nb, f)
			}
		}
		t.sent[nb] = merged
	}
	return md.updates()
}

// unmerged returns the unmerged forwarding set of nb in canonical order.
func (t *Table) unmerged(nb Iface) []match.Filter {
	out := make([]match.Filter, 0, len(t.fwd[nb]))
	for _, f := range t.fwd[nb] {
		out = append(out, f)
	}
	slices.SortFunc(out, match.Filter.Compare)
	return out
}

// mergeFilters merges pairs of filters perfectly (the result matches
// exactly their union) until no pair merges; the result is sorted and
// matches exactly the events the input matches.
func mergeFilters(fs []match.Filter) []match.Filter {
	fs = slices.Clone(fs)
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(fs) && !merged; i++ {
			for j := i + 1; j < len(fs); j++ {
				if m, perfect := match.Merge(fs[i], fs[j]); perfect {
					fs[i] = m
					fs = slices.Delete(fs, j, j+1)
					merged = true
					break
				}
			}
		}
	}
	slices.SortFunc(fs, match.Filter.Compare)
	return slices.CompactFunc(fs, match.Filter.Equal)
}
