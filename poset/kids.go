package poset

// childIndexMin is the number of children from which a node indexes them
// by their first string equality (a variable so tests can force the index
// at every size).
var childIndexMin = 32

// kidIndex groups a node's children by the attribute and value of their
// first string equality (key.eqAttr, key.eqHash; attribute 0: none), so
// that RTO can skip at once the children that require another value of
// the new filter's attribute: they are disjoint from it. Each bucket is in
// seq order and an emptied bucket is freed (the last bucket of its group
// takes its place), so a walk's order depends only on the sequence of
// edge changes: walks are deterministic.
type kidIndex struct {
	groups []kidGroup
}

type kidGroup struct {
	attr    int32
	byHash  map[uint64]int // index into buckets
	buckets []kidBucket
}

type kidBucket struct {
	hash  uint64
	nodes []*node
}

// add indexes child c.
func (x *kidIndex) add(c *node) {
	g := x.group(c.key.eqAttr, true)
	i, ok := g.byHash[c.key.eqHash]
	if !ok {
		i = len(g.buckets)
		g.byHash[c.key.eqHash] = i
		g.buckets = append(g.buckets, kidBucket{hash: c.key.eqHash})
	}
	g.buckets[i].nodes = insertBySeq(g.buckets[i].nodes, c)
}

// remove forgets child c, and its bucket once empty.
func (x *kidIndex) remove(c *node) {
	g := x.group(c.key.eqAttr, false)
	if g == nil {
		return
	}
	i, ok := g.byHash[c.key.eqHash]
	if !ok {
		return
	}
	b := &g.buckets[i]
	b.nodes, _ = removeBySeq(b.nodes, c)
	if len(b.nodes) > 0 {
		return
	}
	delete(g.byHash, b.hash)
	last := len(g.buckets) - 1
	if i != last {
		g.buckets[i] = g.buckets[last]
		g.byHash[g.buckets[i].hash] = i
	}
	g.buckets[last] = kidBucket{}
	g.buckets = g.buckets[:last]
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

// overlapping appends to dst the buckets holding every child that may
// overlap a filter whose first string equality is (attr, hash): all
// children, except those whose first string equality is on attr with
// another value.
func (x *kidIndex) overlapping(attr int32, hash uint64, dst [][]*node) [][]*node {
	for gi := range x.groups {
		g := &x.groups[gi]
		if attr != 0 && g.attr == attr {
			if i, ok := g.byHash[hash]; ok {
				dst = append(dst, g.buckets[i].nodes)
			}
			continue
		}
		for _, b := range g.buckets {
			dst = append(dst, b.nodes)
		}
	}
	return dst
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
