package poset

// Poset is the SIENA filters poset: a directed acyclic graph whose nodes
// are the distinct filter classes and whose edges are exactly the immediate
// covering relation (the Hasse diagram of Covers). A node can have several
// parents. Insert and delete cost covering tests linear in the number of
// nodes in the classic algorithms; the candidate index (Config.Classic off)
// makes them proportional to the number of candidates instead.
type Poset struct {
	*core
}

// NewPoset returns an empty poset.
func NewPoset(cfg Config) *Poset {
	return &Poset{newCore("poset", posetAlg{indexed: !cfg.Classic}, !cfg.Classic, false)}
}

type posetAlg struct{ indexed bool }

func (a posetAlg) place(c *core, u *node) *node {
	c.newEpoch()
	var preds, succs []*node
	if a.indexed && c.all.idx != nil {
		preds, succs = c.posetNeighboursIndexed(u)
		if eq := c.equivalentPred(u, preds); eq != nil {
			return eq
		}
	} else {
		preds = c.posetPreds(u, c.roots.members())
		if eq := c.equivalentPred(u, preds); eq != nil {
			return eq // before the successor search, which it would waste
		}
		var anchor *node
		if len(preds) > 0 {
			anchor = preds[0]
		}
		succs = c.posetSuccs(u, anchor)
	}
	c.posetLink(u, preds, succs)
	return nil
}

// equivalentPred returns a predecessor that u also covers: it is the class
// u belongs to.
func (c *core) equivalentPred(u *node, preds []*node) *node {
	for _, p := range preds {
		if c.testDown(p, u) {
			return p
		}
	}
	return nil
}

// posetPreds descends from the given nodes into children that cover u; a
// covering node none of whose children covers u is an immediate
// predecessor. The result is in seq order.
func (c *core) posetPreds(u *node, from []*node) []*node {
	var preds []*node
	queue := make([]*node, 0, 8)
	for _, r := range from {
		if c.testUp(r, u) && !r.queued {
			r.queued = true
			queue = append(queue, r)
		}
	}
	for i := 0; i < len(queue); i++ {
		w := queue[i]
		lower := false
		for _, ch := range w.children() {
			if c.testUp(ch, u) {
				lower = true
				if !ch.queued {
					ch.queued = true
					queue = append(queue, ch)
				}
			}
		}
		if !lower {
			preds = append(preds, w)
		}
	}
	sortBySeq(preds)
	return preds
}

// posetSuccs finds the immediate successors of u: breadth first below
// anchor (a node covering u; nil means the roots), stopping at nodes u
// covers; those none of whose parents u covers are immediate.
func (c *core) posetSuccs(u *node, anchor *node) []*node {
	start := c.roots.members()
	if anchor != nil {
		start = anchor.children()
	}
	queue := append([]*node(nil), start...)
	var found []*node
	for i := 0; i < len(queue); i++ {
		w := c.touch(queue[i])
		if w.visited {
			continue
		}
		w.visited = true
		if c.testDown(w, u) {
			found = append(found, w)
			continue
		}
		queue = append(queue, w.children()...)
	}
	var succs []*node
	for _, s := range found {
		if !c.anyParentCovered(s, u) {
			succs = append(succs, s)
		}
	}
	sortBySeq(succs)
	return succs
}

// anyParentCovered reports whether u covers some parent of s (so s is not
// an immediate successor of u).
func (c *core) anyParentCovered(s, u *node) bool {
	for _, q := range s.parents() {
		if c.testDown(q, u) {
			return true
		}
	}
	return false
}

// posetNeighboursIndexed finds the immediate predecessors and successors of
// u from the candidate index: the coverers none of whose children covers u,
// and the covered nodes none of whose parents is covered.
func (c *core) posetNeighboursIndexed(u *node) (preds, succs []*node) {
	ups := c.all.idx.coverers(u, c.buf[:0])
	n := len(ups)
	ups = c.all.idx.covered(u, ups)
	downs := ups[n:]
	ups = ups[:n]
	for _, w := range ups {
		c.testUp(w, u)
	}
	for _, w := range downs {
		c.testDown(w, u)
	}
	for _, w := range ups {
		if w.up && !anyChild(w, func(ch *node) bool { return ch.mark == c.epoch && ch.up }) {
			preds = append(preds, w)
		}
	}
	for _, w := range downs {
		if w.down && !anyParent(w, func(p *node) bool { return p.mark == c.epoch && p.down }) {
			succs = append(succs, w)
		}
	}
	c.buf = ups[:0]
	return preds, succs
}

func anyChild(n *node, fn func(*node) bool) bool {
	for _, ch := range n.children() {
		if fn(ch) {
			return true
		}
	}
	return false
}

func anyParent(n *node, fn func(*node) bool) bool {
	for _, p := range n.parents() {
		if fn(p) {
			return true
		}
	}
	return false
}

// posetLink inserts u between its immediate predecessors and successors,
// removing the edges that u now makes transitive.
func (c *core) posetLink(u *node, preds, succs []*node) {
	for _, s := range succs {
		if s.isRoot() {
			c.roots.remove(s)
		}
		for _, p := range preds {
			removeEdge(p, s)
		}
		addEdge(u, s)
	}
	for _, p := range preds {
		addEdge(p, u)
	}
	if len(preds) == 0 {
		c.roots.add(u)
	}
}

// unlink removes u and links each of its parents to each of its children
// unless the child stays reachable from that parent through another one.
func (posetAlg) unlink(c *core, u *node) []*node {
	parents := append([]*node(nil), u.parents()...)
	children := append([]*node(nil), u.children()...)
	if u.isRoot() {
		c.roots.remove(u)
	}
	for _, p := range parents {
		removeEdge(p, u)
	}
	for _, ch := range children {
		removeEdge(u, ch)
	}
	for _, ch := range children {
		others := append([]*node(nil), ch.parents()...)
		for _, p := range parents {
			if !c.coversAny(p, others) {
				addEdge(p, ch)
			}
		}
		if ch.isRoot() {
			c.roots.add(ch)
		}
	}
	return children
}

// coversAny reports whether p covers one of the nodes.
func (c *core) coversAny(p *node, nodes []*node) bool {
	for _, q := range nodes {
		if c.covers(p, q) {
			return true
		}
	}
	return false
}
