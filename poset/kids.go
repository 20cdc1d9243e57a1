package poset

// childIndexMin is the number of children from which a node indexes them
// by their first string equality (a variable so tests can force the index
// at every size).
var childIndexMin = 32

// kidIndex groups a node's children by the attribute and value of their
// first string equality (key.eqAttr, key.eqHash; attribute 0: none), so
// that RTO can skip at once the children that require another value of
// the new filter's attribute: they are disjoint from it. Groups and buckets
// keep their creation order and each bucket is in seq order, so walks are
// deterministic.
type kidIndex struct {
	groups []kidGroup
}

type kidGroup struct {
	attr    int32
	byHash  map[uint64]int // index into buckets
	buckets [][]*node
}

// add indexes child c.
func (x *kidIndex) add(c *node) {
	g := x.group(c.key.eqAttr, true)
	i, ok := g.byHash[c.key.eqHash]
	if !ok {
		i = len(g.buckets)
		g.byHash[c.key.eqHash] = i
		g.buckets = append(g.buckets, nil)
	}
	g.buckets[i] = insertBySeq(g.buckets[i], c)
}

// remove forgets child c (empty buckets stay, to keep indices stable).
func (x *kidIndex) remove(c *node) {
	g := x.group(c.key.eqAttr, false)
	if g == nil {
		return
	}
	if i, ok := g.byHash[c.key.eqHash]; ok {
		g.buckets[i], _ = removeBySeq(g.buckets[i], c)
	}
}

func (x *kidIndex) group(attr int32, create bool) *kidGroup {
	for i := range x.groups {
		if x.groups[i].attr == attr {
			return &x.groups[i]
		}
	}
	if !create {
		return nil
	}
	x.groups = append(x.groups, kidGroup{attr: attr, byHash: make(map[uint64]int)})
	return &x.groups[len(x.groups)-1]
}

// each calls fn for every child that may overlap a filter whose first
// string equality is (attr, hash): all children, except those whose first
// string equality is on attr with another value.
func (x *kidIndex) each(attr int32, hash uint64, fn func(*node)) {
	for gi := range x.groups {
		g := &x.groups[gi]
		if attr != 0 && g.attr == attr {
			if i, ok := g.byHash[hash]; ok {
				for _, c := range g.buckets[i] {
					fn(c)
				}
			}
			continue
		}
		for _, b := range g.buckets {
			for _, c := range b {
				fn(c)
			}
		}
	}
}

// indexKids keeps p's child index in step after c was added to or removed
// from p.children: built when p reaches childIndexMin children, kept after.
func indexKids(p, c *node, added bool) {
	switch {
	case p.kids != nil && added:
		p.kids.add(c)
	case p.kids != nil:
		p.kids.remove(c)
	case len(p.children) >= childIndexMin:
		p.kids = &kidIndex{}
		for _, ch := range p.children {
			p.kids.add(ch)
		}
	}
}
