package poset

import "hash/maphash"

// nodeTable is a set of nodes in an open-addressing table, probed
// linearly, at most 2/3 full, with a byte of each member's hash beside it
// so that a probe reads a node only when that byte agrees. What a member
// is found by (its canonical text, or the node itself) is the hash the
// table was made with (textKey, nodeKey, bucketHash) and the test a
// lookup passes.
//
// Why not a Go map: the structure's text index (core.byText), the
// Table's per-interface sets of nodes (Table.own) and the candidate
// index's buckets of one node (eqBuckets.one) hold an entry per filter a
// router holds, and a map's groups, sized by powers of two, hold each key
// beside its value; here a member costs a pointer and a byte a position,
// at 1/3 to 2/3 load (docs/benchmarks.md has the figures). The hashes are seeded (hashSeed): texts
// and filters come from clients and neighbours, which must not be able to
// pile their filters up in one run.
type nodeTable struct {
	hashOf func(*node) uint64
	slots  []*node
	tags   []uint8 // 0: an empty position
	n      int
}

// textKey hashes a node by its canonical text (core.byText).
func textKey(n *node) uint64 { return textHash(n.text) }

// textHash is textKey of a node whose text is s.
func textHash(s string) uint64 { return maphash.String(hashSeed, s) }

// nodeKey hashes a node by its address (Table.own): Go's heap objects do
// not move.
func nodeKey(n *node) uint64 { return maphash.Comparable(hashSeed, n) }

func newNodeTable(hashOf func(*node) uint64) nodeTable { return nodeTable{hashOf: hashOf} }

// tagOf is the byte of hash h kept beside its member, never 0.
func tagOf(h uint64) uint8 { return uint8(h>>56) | 1 }

// home returns the position where hash h's probe starts.
func (t *nodeTable) home(h uint64) int { return int(h & uint64(len(t.slots)-1)) }

// next returns the position after i.
func (t *nodeTable) next(i int) int { return (i + 1) & (len(t.slots) - 1) }

// lookup returns the member of hash h for which is reports true, or nil.
func (t *nodeTable) lookup(h uint64, is func(*node) bool) *node {
	if t.n == 0 {
		return nil
	}
	tag := tagOf(h)
	for i := t.home(h); t.tags[i] != 0; i = t.next(i) {
		if t.tags[i] == tag && is(t.slots[i]) {
			return t.slots[i]
		}
	}
	return nil
}

// get returns the member whose text is s (a table made with textKey).
func (t *nodeTable) get(s string) *node {
	return t.lookup(textHash(s), func(n *node) bool { return n.text == s })
}

// has reports whether n is a member (a table made with nodeKey).
func (t *nodeTable) has(n *node) bool {
	return t.lookup(nodeKey(n), func(m *node) bool { return m == n }) != nil
}

// add makes n a member; the caller knows it is not one, nor any member
// found as n is.
func (t *nodeTable) add(n *node) { t.addHashed(n, t.hashOf(n)) }

// addHashed is add of n, whose hash the caller has computed (h).
func (t *nodeTable) addHashed(n *node, h uint64) {
	if (t.n+1)*3 > len(t.slots)*2 {
		t.grow()
	}
	t.place(n, h)
	t.n++
}

// place puts n, of hash h, at the first empty position of its probe.
func (t *nodeTable) place(n *node, h uint64) {
	i := t.home(h)
	for t.tags[i] != 0 {
		i = t.next(i)
	}
	t.slots[i], t.tags[i] = n, tagOf(h)
}

// grow doubles the table (8 positions at first) and places every member
// again.
func (t *nodeTable) grow() {
	old := t.slots
	t.slots = make([]*node, max(8, 2*len(old)))
	t.tags = make([]uint8, len(t.slots))
	for _, n := range old {
		if n != nil {
			t.place(n, t.hashOf(n))
		}
	}
}

// remove takes member n out, moving back the members after it in its run
// that probed past it, so that no probe stops short of a member it must
// find (deletion without tombstones). It reports whether n was a member.
func (t *nodeTable) remove(n *node) bool {
	if t.n == 0 {
		return false
	}
	i := t.home(t.hashOf(n))
	for t.slots[i] != n {
		if t.tags[i] == 0 {
			return false
		}
		i = t.next(i)
	}
	for j := t.next(i); t.tags[j] != 0; j = t.next(j) {
		h := t.home(t.hashOf(t.slots[j]))
		// The member at j may move to the hole at i when its home is not
		// in the cyclic range (i, j].
		if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
			t.slots[i], t.tags[i] = t.slots[j], t.tags[j]
			i = j
		}
	}
	t.slots[i], t.tags[i] = nil, 0
	t.n--
	return true
}

// len returns the number of members.
func (t *nodeTable) len() int { return t.n }

// all calls fn on every member, in no particular order, until fn returns
// false. The table must not change meanwhile.
func (t *nodeTable) all(fn func(*node) bool) {
	for _, n := range t.slots {
		if n != nil && !fn(n) {
			return
		}
	}
}
