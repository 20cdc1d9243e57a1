package poset

import "slices"

// childIndexMin is the number of children from which a node indexes them
// by their first string equality (a variable so tests can force the index
// at every size).
var childIndexMin = 32

// kidIndex holds a node's children grouped by the attribute and value of
// their first string equality (key.eqAttr, key.eqHash; attribute 0:
// none), so that RTO can skip at once the children that require another
// value of the new filter's attribute: they are disjoint from it. It is
// flat, so that a lookup costs few cache misses: nodes holds the children
// sorted by (attribute, value hash, seq) and keys one entry per group of
// equal (attribute, value hash), sorted, with where its nodes start. The
// lookup arrays (hashes, starts, spans) are derived from keys after every
// change. Walks are deterministic.
type kidIndex struct {
	keys  []kidKey
	nodes []*node
	// hashes[i] is keys[i].hash; starts[i] keys[i].start, then len(nodes)
	hashes []uint64
	starts []int32
	spans  []kidSpan // per attribute other than 0: its groups and nodes
}

// kidSpan is the run of groups [lo, hi) and of nodes [first, last) whose
// first string equality is on attr.
type kidSpan struct {
	attr, lo, hi, first, last int32
}

type kidKey struct {
	attr         int32
	start, count int32
	hash         uint64
}

func cmpKidKey(k kidKey, c *node) int {
	switch {
	case k.attr != c.key.eqAttr:
		return cmpInt(k.attr, c.key.eqAttr)
	case k.hash < c.key.eqHash:
		return -1
	case k.hash > c.key.eqHash:
		return 1
	}
	return 0
}

func cmpInt(a, b int32) int {
	if a < b {
		return -1
	}
	return 1
}

// add indexes child c.
func (x *kidIndex) add(c *node) {
	k, found := slices.BinarySearchFunc(x.keys, c, cmpKidKey)
	if !found {
		start := int32(len(x.nodes))
		if k < len(x.keys) {
			start = x.keys[k].start
		}
		x.keys = slices.Insert(x.keys, k, kidKey{attr: c.key.eqAttr, hash: c.key.eqHash, start: start})
	}
	key := &x.keys[k]
	bucket := x.nodes[key.start : key.start+key.count]
	i, dup := findBySeq(bucket, c)
	if dup {
		return
	}
	x.nodes = slices.Insert(x.nodes, int(key.start)+i, c)
	key.count++
	for j := k + 1; j < len(x.keys); j++ {
		x.keys[j].start++
	}
	x.derive()
}

// remove forgets child c, and its group once empty.
func (x *kidIndex) remove(c *node) {
	k, found := slices.BinarySearchFunc(x.keys, c, cmpKidKey)
	if !found {
		return
	}
	key := &x.keys[k]
	i, ok := findBySeq(x.nodes[key.start:key.start+key.count], c)
	if !ok {
		return
	}
	x.nodes = slices.Delete(x.nodes, int(key.start)+i, int(key.start)+i+1)
	key.count--
	for j := k + 1; j < len(x.keys); j++ {
		x.keys[j].start--
	}
	if key.count == 0 {
		x.keys = slices.Delete(x.keys, k, k+1)
	}
	x.derive()
}

// derive rebuilds the lookup arrays from keys.
func (x *kidIndex) derive() {
	x.hashes, x.starts, x.spans = x.hashes[:0], x.starts[:0], x.spans[:0]
	for i, k := range x.keys {
		x.hashes = append(x.hashes, k.hash)
		x.starts = append(x.starts, k.start)
		if k.attr == 0 {
			continue
		}
		if n := len(x.spans); n == 0 || x.spans[n-1].attr != k.attr {
			x.spans = append(x.spans, kidSpan{attr: k.attr, lo: int32(i), first: k.start})
		}
		sp := &x.spans[len(x.spans)-1]
		sp.hi, sp.last = int32(i+1), k.start+k.count
	}
	x.starts = append(x.starts, int32(len(x.nodes)))
}

// overlapping appends to dst the runs of children that may overlap a
// filter whose first string equality is (attr, hash): all children,
// except those whose first string equality is on attr with another value.
func (x *kidIndex) overlapping(attr int32, hash uint64, dst [][]*node) [][]*node {
	var sp *kidSpan
	for i := range x.spans {
		if x.spans[i].attr == attr {
			sp = &x.spans[i]
		}
	}
	if attr == 0 || sp == nil { // no child has a string equality on attr
		return append(dst, x.nodes)
	}
	dst = append(dst, x.nodes[:sp.first])
	if i, ok := slices.BinarySearch(x.hashes[sp.lo:sp.hi], hash); ok {
		g := int(sp.lo) + i
		dst = append(dst, x.nodes[x.starts[g]:x.starts[g+1]])
	}
	return append(dst, x.nodes[sp.last:])
}

// indexKids keeps p's child index in step after c was added to or removed
// from p.children: built when p reaches childIndexMin children, kept after.
func indexKids(p, c *node, added bool) {
	m := p.more // the edge's: not nil
	switch {
	case m.kids != nil && added:
		m.kids.add(c)
	case m.kids != nil:
		m.kids.remove(c)
	case len(m.children) >= childIndexMin:
		m.kids = &kidIndex{}
		for _, ch := range m.children {
			m.kids.add(ch)
		}
	}
}
