package poset

// Shallow is a covering forest built for very many subscriptions: an
// insert asks the candidate index of the roots alone. The roots are
// pairwise incomparable; a new filter that some root covers becomes a
// child of the first such root (in creation order), without descending
// further and without comparing it with that root's other children; a new
// filter that no root covers becomes a root and adopts the roots it
// covers, with their subtrees. Every edge is a covering (so Match is exact
// and a Table over it forwards every event it must), but children of a
// node may be comparable and a filter equivalent to a non-root node sits
// in a node of its own.
//
// Why: the poset's exact predecessors and successors, and the forest's
// descent, cost time proportional to the filters on the path, and on
// workloads where filters form long covering chains (price < p for one
// symbol, for many values of p) the path grows with the table. Here an
// insert costs one root query; the roots of such chains are their widest
// filters, few per symbol and kind, so the query stays small as the table
// grows. The price: a Table over it forwards a filter that a root covers
// to nobody (as the poset does), but after a root leaves its children are
// placed again, one root query each.
type Shallow struct {
	*core
}

// NewShallow returns an empty shallow forest. cfg.Classic turns the roots'
// candidate index off.
func NewShallow(cfg Config) *Shallow {
	c := newCore("shallow", shallowAlg{}, false, !cfg.Classic)
	// It takes no RTO placement (StartRTO refuses it), the one reader of
	// the roots' filters and texts side by side: the roots keep none.
	c.roots.cached = false
	return &Shallow{c}
}

type shallowAlg struct{}

func (shallowAlg) place(c *core, u *node) *node {
	if w := c.firstCoverer(u, nil); w != nil {
		if c.covers(u, w) {
			return w // equivalent to a root
		}
		addEdge(w, u)
		return nil
	}
	c.shallowRoot(u)
	return nil
}

// shallowRoot makes u, which no root covers, a root that adopts the roots
// it covers.
func (c *core) shallowRoot(u *node) {
	adopt := c.coveredSiblings(u, nil)
	c.roots.add(u)
	for _, a := range adopt {
		c.roots.remove(a)
		addEdge(u, a)
	}
}

// unlink removes u. A non-root's children go to its parent (which covers
// them, through u); a root's children are placed again among the roots.
// It returns u's former children, whose ancestors changed.
func (shallowAlg) unlink(c *core, u *node) []*node {
	children := append([]*node(nil), u.children()...)
	for _, ch := range children {
		removeEdge(u, ch)
	}
	if !u.isRoot() {
		p := u.parents()[0]
		removeEdge(p, u)
		for _, ch := range children {
			addEdge(p, ch)
		}
		return children
	}
	c.roots.remove(u)
	for _, ch := range children {
		if w := c.firstCoverer(ch, nil); w != nil {
			addEdge(w, ch)
			continue
		}
		c.shallowRoot(ch)
	}
	return children
}
