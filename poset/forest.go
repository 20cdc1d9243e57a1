package poset

// Forest is the poset-derived forest of Tarkoma and Kangasharju: every node
// has at most one parent, which covers it, and the children of a node (and
// the roots) are pairwise incomparable. An insert follows one path from the
// roots: it descends into the first sibling (in creation order) that covers
// the new filter, and where none does, the new node adopts the siblings it
// covers. A filter covered by several incomparable filters sits below only
// one of them, so the forest knows less than the poset but costs far fewer
// covering tests.
type Forest struct {
	*core
}

// NewForest returns an empty forest.
func NewForest(cfg Config) *Forest {
	return &Forest{newCore("forest", forestAlg{}, false, !cfg.Classic)}
}

type forestAlg struct{}

func (forestAlg) place(c *core, u *node) *node {
	return c.forestPlace(u, nil, true)
}

// forestPlace inserts u (with its subtree) below parent (nil: the roots).
// When fresh, a node equivalent to u found on the way is returned instead
// and u stays unlinked.
func (c *core) forestPlace(u, parent *node, fresh bool) *node {
	for {
		w := c.firstCoverer(u, parent)
		if w == nil {
			break
		}
		if fresh && c.covers(u, w) {
			return w
		}
		parent = w
	}
	adopt := c.coveredSiblings(u, parent)
	c.attach(u, parent)
	for _, a := range adopt {
		c.detach(a)
		c.forestPlace(a, u, false)
	}
	return nil
}

// firstCoverer returns the first child of parent (or root) in seq order
// that covers u.
func (c *core) firstCoverer(u, parent *node) *node {
	cands := c.levelCoverers(u, parent)
	for _, w := range cands {
		if w != u && c.covers(w, u) {
			return w
		}
	}
	return nil
}

// coveredSiblings returns the children of parent (or roots) that u covers.
func (c *core) coveredSiblings(u, parent *node) []*node {
	var cands []*node
	if parent == nil {
		cands = c.roots.covered(u, nil)
	} else {
		cands = parent.children()
	}
	var out []*node
	for _, w := range cands {
		if w != u && c.covers(u, w) {
			out = append(out, w)
		}
	}
	return out
}

func (c *core) levelCoverers(u, parent *node) []*node {
	if parent == nil {
		c.buf = c.roots.coverers(u, c.buf[:0])
		return c.buf
	}
	return parent.children()
}

// attach makes u a child of parent, or a root.
func (c *core) attach(u, parent *node) {
	if parent == nil {
		c.roots.add(u)
		return
	}
	addEdge(parent, u)
}

// detach unlinks u from its parent, or from the roots.
func (c *core) detach(u *node) {
	if u.isRoot() {
		c.roots.remove(u)
		return
	}
	removeEdge(u.parents()[0], u)
}

// unlink removes u and re-inserts each child subtree from u's parent.
func (forestAlg) unlink(c *core, u *node) []*node {
	var parent *node
	if !u.isRoot() {
		parent = u.parents()[0]
	}
	c.detach(u)
	children := append([]*node(nil), u.children()...)
	for _, ch := range children {
		removeEdge(u, ch)
	}
	for _, ch := range children {
		c.forestPlace(ch, parent, false)
	}
	return children
}
