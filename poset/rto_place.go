package poset

// Where a placement puts the filter: the forest's one-path descent, the
// position read from the answers, its verification, and the linking.

// advanceForest follows the forest's single path: into the first node of
// the layer (in creation order) that covers the filter.
func (p *Placement) advanceForest() (next []*node, finished bool) {
	n := p.firstUp
	if n == nil {
		return nil, true
	}
	p.firstUp = nil
	p.parent = n
	if p.is(n, bitDown) {
		return nil, true
	}
	// Children disjoint from the filter can neither cover it nor be
	// adopted by it: they are not sent.
	next = nil
	p.stats.Touched += len(n.children())
	for _, ch := range n.children() {
		if !disjoint(&ch.key, &p.u.key) {
			next = append(next, ch)
		}
	}
	return next, len(next) == 0
}

// position is where the answers place the filter.
type position struct {
	join         *node   // an equivalent node to join, or nil
	preds, succs []*node // poset
	parent       *node   // forest; nil means a root
	adopt        []*node // forest
}

// finish places the filter from the answers, after verification when the
// policy asks for it, falling back to a normal insert when it fails.
func (p *Placement) finish() {
	c := p.c
	before := c.tests
	pos := p.position()
	verified := p.cfg.Policy == Verify || p.cfg.Policy == Majority && p.stats.Disputed
	p.stats.Verified = verified
	if verified && !p.verify(pos) || !verified && p.wouldCycle(pos) {
		p.stats.Fallback = true
		c.newEpoch()
		pos = position{join: c.alg.place(c, p.u)}
		if pos.join == nil {
			c.register(p.u)
		}
		p.commit(pos.join, before)
		return
	}
	if pos.join == nil {
		p.apply(pos)
	}
	p.commit(pos.join, before)
}

// wouldCycle reports whether linking the new node at pos would close a
// cycle: a claimed successor (or adopted node) that is a claimed
// predecessor (or the parent) or one of its ancestors. Verified answers
// never do (see verify), but unverified ones (trust, an undisputed
// majority) can, and a cycle would hang every walk up the structure and
// hide its nodes from the roots. Trust may cost events; it must not
// corrupt the structure. The check walks ancestors only: no covering
// tests, and the epoch's marks (queued: below; visited: walked) instead
// of maps, as belowDown does.
func (p *Placement) wouldCycle(pos position) bool {
	below := pos.succs
	above := pos.preds
	if p.forest {
		below = pos.adopt
		above = nil
		if pos.parent != nil {
			above = []*node{pos.parent}
		}
	}
	if len(below) == 0 || len(above) == 0 {
		return false
	}
	c := p.c
	c.newEpoch()
	for _, n := range below {
		c.touch(n).queued = true
	}
	stack := p.stack[:0]
	defer func() { p.stack = emptied(stack) }()
	for _, n := range above {
		if !c.touch(n).visited {
			n.visited = true
			stack = append(stack, n)
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack[len(stack)-1] = nil
		stack = stack[:len(stack)-1]
		if n.queued {
			return true
		}
		for _, up := range n.parents() {
			if !c.touch(up).visited {
				up.visited = true
				stack = append(stack, up)
			}
		}
	}
	return false
}

func (p *Placement) position() position {
	if p.forest {
		return p.forestPosition()
	}
	var pos position
	for _, n := range p.ups {
		if !p.mark(n).kid { // no child answered as covering the filter
			if p.is(n, bitDown) {
				return position{join: n}
			}
			pos.preds = append(pos.preds, n)
		}
	}
	for _, n := range p.downs {
		if !p.is(n, bitUp) && p.immediateBelow(n) {
			pos.succs = append(pos.succs, n)
		}
	}
	sortBySeq(pos.preds)
	sortBySeq(pos.succs)
	return pos
}

// forestPosition: below the last node the filter was found to be covered
// by (p.parent), adopting that node's children it covers; at the roots,
// adopting the roots it covers.
func (p *Placement) forestPosition() position {
	if p.parent == nil { // only the roots were sent: p.downs are roots
		var adopt []*node
		for _, n := range p.downs {
			if !p.is(n, bitUp) {
				adopt = append(adopt, n)
			}
		}
		sortBySeq(adopt)
		return position{adopt: adopt}
	}
	if p.is(p.parent, bitDown) {
		return position{join: p.parent}
	}
	return position{parent: p.parent, adopt: p.downChildren(p.parent)}
}

// downChildren returns the children of n that the answers say the filter
// covers (the forest's adopted nodes when n is the parent).
func (p *Placement) downChildren(n *node) []*node {
	var out []*node
	for _, ch := range n.children() {
		if p.is(ch, bitDown) && !p.is(ch, bitUp) {
			out = append(out, ch)
		}
	}
	return out
}

// immediateBelow reports whether no parent of n is covered by the
// filter, as far as the answers tell: a parent answered as covered is, and
// so is one not sent that lies below such a node.
func (p *Placement) immediateBelow(n *node) bool {
	for _, q := range n.parents() {
		if p.is(q, bitDown) || !p.sent(q) && p.belowDown(q) {
			return false
		}
	}
	return true
}

// belowDown reports whether an ancestor of q (not sent itself) was
// answered as covered by the filter. When everything overlapping was
// explored (all), a parent that was not sent can only lie below such a
// node. Otherwise a node outside the explored region may be one the filter
// does not cover: a cheap necessary condition (mayCover, not a covering
// test) rules most of those out, and the others are walked up through
// their ancestors not sent.
func (p *Placement) belowDown(q *node) bool {
	if p.all {
		return true
	}
	if !mayCover(&p.u.key, &q.key) {
		return false
	}
	c := p.c
	c.newEpoch()
	stack := append(p.stack[:0], q)
	defer func() { p.stack = emptied(stack) }()
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack[len(stack)-1] = nil
		stack = stack[:len(stack)-1]
		for _, a := range n.parents() {
			if p.is(a, bitDown) {
				return true
			}
			if !c.touch(a).visited && !p.sent(a) {
				a.visited = true
				stack = append(stack, a)
			}
		}
	}
	return false
}

// verify checks a position with covering tests. A poset predecessor
// must cover the filter strictly: one equivalent to it is a node to join,
// and an edge between equivalent nodes would let later lies, each
// covering claim true, close a cycle of equivalent nodes that no root
// leads to once the nodes above it go (their events missed). With strict
// predecessors every edge into a new node leaves a node not equivalent to
// it, so no cycle can form. (mayCover rules most predecessors out without
// a covering test.)
func (p *Placement) verify(pos position) bool {
	c, u := p.c, p.u
	if pos.join != nil {
		return c.covers(pos.join, u) && c.covers(u, pos.join)
	}
	if pos.parent != nil && !c.covers(pos.parent, u) {
		return false
	}
	for _, n := range pos.preds {
		if !c.covers(n, u) || mayCover(&u.key, &n.key) && c.covers(u, n) {
			return false
		}
	}
	for _, list := range [][]*node{pos.succs, pos.adopt} {
		for _, n := range list {
			if !c.covers(u, n) {
				return false
			}
		}
	}
	return true
}

// apply links the new node at a position, without covering tests.
func (p *Placement) apply(pos position) {
	c, u := p.c, p.u
	if _, forest := c.alg.(forestAlg); forest {
		for _, a := range pos.adopt {
			c.detach(a)
		}
		c.attach(u, pos.parent)
		for _, a := range pos.adopt {
			c.attach(a, u)
		}
	} else {
		c.posetLink(u, pos.preds, pos.succs)
	}
	c.register(u)
}

// commit records the subscription at its node (join, or the new node).
func (p *Placement) commit(join *node, before uint64) {
	c := p.c
	n := join
	if n == nil {
		n = p.u
	}
	c.bind(p.e, p.f, n)
	c.subs++
	c.ctr.Inserts++
	c.ctr.InsertTests += c.tests - before
	p.done = true
	p.reset()
	c.rtoMem, p.rtoScratch = p.rtoScratch, nil
}
