package poset

// How a poset placement explores the structure: which nodes' children are
// sent in the next layer, from the answers so far.

// advance computes the next layer to send from the answers so far, or
// reports that the position is known; asked is how many covering nodes
// were known before this round's answers.
//
// Poset: every node answered as covering the filter has its children sent,
// so every predecessor is found. Every successor lies below every
// predecessor, so once a first predecessor is known (a covering node whose
// children, all answered by then, include none that covers the filter),
// the successors are searched only in its region: its overlapping children
// that the filter does not cover, and theirs in turn. When no root covers
// the filter there is no predecessor: then every overlapping node the
// filter does not cover is explored (all).
func (p *Placement) advance(asked int) (next []*node, finished bool) {
	if p.forest {
		return p.advanceForest()
	}
	if p.layer == 1 {
		p.all = len(p.ups) == 0
		if p.all {
			for _, r := range p.expandable {
				p.expand(r, false)
			}
		}
	}
	if !p.all && !p.region {
		p.findRegion(asked)
	}
	for len(p.todo) > 0 {
		n := p.todo[len(p.todo)-1]
		p.todo[len(p.todo)-1] = nil
		p.todo = p.todo[:len(p.todo)-1]
		if p.mark(n).ans&bitExpanded == 0 {
			p.expand(n, true)
		}
	}
	next, p.cur, p.next = p.next, p.next, emptied(p.cur)
	return next, len(next) == 0
}

// findRegion starts the successor search below the first predecessor
// among the covering nodes answered before the last round (their children
// have all been answered since). Its children join the region.
func (p *Placement) findRegion(asked int) {
	for _, w := range p.ups[p.checked:asked] {
		if m := p.mark(w); !m.kid && m.ans&bitDown == 0 {
			p.region = true
			p.expand(w, true)
			break
		}
	}
	p.checked = asked
}

// note records a node's answer: the lists the position is computed from,
// and (poset) the expansions it calls for. Every node answered as covering
// the filter has its children sent (the search for predecessors), and so
// has every overlapping node that it does not cover in the successor
// search's region; at layer 0 the overlapping roots wait for advance.
func (p *Placement) note(n *node, v uint8) {
	if v&bitUp != 0 {
		p.ups = append(p.ups, n)
		if p.firstUp == nil {
			p.firstUp = n
		}
		if !p.forest {
			for _, q := range n.parents() {
				p.setKid(q)
			}
		}
	}
	if v&bitDown != 0 {
		p.downs = append(p.downs, n)
	}
	switch {
	case p.forest || v&bitDown != 0:
	case v&bitUp != 0:
		p.expand(n, false)
	case v&bitOverlap == 0:
	case p.layer == 0:
		p.expandable = append(p.expandable, n)
	case p.all || v&bitRegion != 0:
		p.expand(n, p.region)
	}
}

// expand queues n's children not looked at yet for the next layer,
// leaving out those disjoint from the filter: they can be neither above
// nor below it. A node with many children skips, through its child index,
// whole buckets of children that require another value of the filter's
// first string equality, without looking at them. With region, the
// children join the successor search's region.
func (p *Placement) expand(n *node, region bool) {
	p.orAns(n, bitExpanded)
	if n.kids() == nil {
		for _, ch := range n.children() {
			p.expandChild(ch, region)
		}
		return
	}
	p.buckets = n.kids().overlapping(p.u.key.eqAttr, p.u.key.eqHash, emptied(p.buckets))
	for _, b := range p.buckets {
		for _, ch := range b {
			p.expandChild(ch, region)
		}
	}
}

// expandChild queues ch unless it was looked at already or is disjoint
// from the filter (marked unsent, so it is looked at once). A child seen
// already that joins the region is expanded in turn if its answer calls
// for it.
func (p *Placement) expandChild(ch *node, region bool) {
	if m := p.mark(ch); m.marked {
		if region && m.ans&bitRegion == 0 {
			p.orAns(ch, bitRegion)
			if (m.ans|bitRegion)&(bitUp|bitDown|bitOverlap|bitExpanded) == bitOverlap {
				p.todo = append(p.todo, ch)
			}
		}
		return
	}
	p.stats.Touched++
	p.setAns(ch, 0)
	if !disjoint(&ch.key, &p.u.key) {
		v := uint8(bitSent) // queued; answered next round
		if region {
			v |= bitRegion
		}
		p.setAns(ch, v)
		p.next = append(p.next, ch)
	}
}
