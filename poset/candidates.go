package poset

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
)

// maxEnumBits bounds subset enumeration in the candidate index: with more
// free bits than this the index walks its groups instead.
const maxEnumBits = 12

// candIndex finds covering candidates among a set of nodes without testing
// each. Nodes are grouped by attribute mask, and within a group bucketed by
// their points (attributes and values; none for plain members): string
// equalities, and numeric spans that are one point (k == 5). A
// covering query enumerates the masks that can be subsets (or supersets) of
// the query's mask, skips the buckets whose points contradict the
// query's, and prunes the rest with a box containment test. Every node that
// covers (or is covered by) the query is returned; some returned nodes may
// not be.
type candIndex struct {
	groups map[uint64]*group // mask -> members; match-all nodes under 0
	loose  []*node           // members outside the complete fragment
	bitCnt [64]int32         // members having each mask bit
	used   uint64            // union of member masks
}

// group holds the members with one attribute mask: those without an
// equality in plain, the others by the attributes their box requires one
// value of (their points: string equalities and numeric points) and then
// by a hash of those values (eqBuckets), so that a query with points on
// these attributes reads its one bucket instead of visiting every bucket
// of the group (every symbol's, on the stock workloads). All the points,
// not the first: filters such as side == S && symbol == T would share a
// bucket per side, thousands of them each. Keyed by a hash rather than
// the values themselves, and a bucket of one node held as the node: a
// map slot of 16 bytes instead of 64 and a slice, most buckets holding
// one node (every distinct symbol); the buckets of one node are a
// nodeTable (a pointer and a tag byte a position), keyed by the node's
// own hash (valuesHash), computed again where the table needs it. Values
// whose hashes collide share a bucket, which only adds candidates: each
// is box-tested, and the box test compares the values.
type group struct {
	plain []*node
	// byPoints: the members by their point attributes, joined with
	// pointSep (attribute names hold no NUL), in box order
	byPoints map[string]*eqBuckets
	one      [1]*node // scratch: a bucket of one node, as a slice to visit
}

// pointSep ends each attribute name of a byPoints key.
const pointSep = "\x00"

// eqBuckets holds the members whose points are on attrs (in box order),
// by a hash of their values there (pointsHash): a bucket of one node in
// one, of more in many (each hash in one of the two).
type eqBuckets struct {
	attrs []string
	one   nodeTable // by valuesHash
	many  map[uint64][]*node
}

// lookupOne returns the bucket of one node of hash h, if any.
func (bs *eqBuckets) lookupOne(h uint64) *node {
	return bs.one.lookup(h, func(n *node) bool { return valuesHash(&n.key) == h })
}

func newGroup() *group { return &group{byPoints: make(map[string]*eqBuckets)} }

// add puts n (whose equality hashes to h) in its bucket.
func (bs *eqBuckets) add(h uint64, n *node) {
	if b, ok := bs.many[h]; ok {
		n.ipos = int32(len(b))
		bs.many[h] = append(b, n)
		return
	}
	if m := bs.lookupOne(h); m != nil {
		bs.one.remove(m)
		if bs.many == nil {
			bs.many = make(map[uint64][]*node)
		}
		m.ipos, n.ipos = 0, 1
		bs.many[h] = []*node{m, n}
		return
	}
	n.ipos = 0
	bs.one.addHashed(n, h)
}

// remove takes n out of its bucket (hash h).
func (bs *eqBuckets) remove(h uint64, n *node) {
	b, ok := bs.many[h]
	if !ok {
		bs.one.remove(n)
		return
	}
	if b = swapRemove(b, n.ipos); len(b) > 1 {
		bs.many[h] = b
		return
	}
	delete(bs.many, h)
	b[0].ipos = 0
	bs.one.addHashed(b[0], h)
}

func (bs *eqBuckets) len() int { return bs.one.len() + len(bs.many) }

// visit calls fn on bucket h, if it holds a node.
func (g *group) visit(bs *eqBuckets, h uint64, fn func([]*node)) {
	if n := bs.lookupOne(h); n != nil {
		g.visitOne(n, fn)
	} else if b := bs.many[h]; len(b) > 0 {
		fn(b)
	}
}

// visitOne calls fn on the bucket holding n alone.
func (g *group) visitOne(n *node, fn func([]*node)) {
	g.one[0] = n
	fn(g.one[:])
	g.one[0] = nil
}

// visitAll calls fn on every bucket of bs.
func (g *group) visitAll(bs *eqBuckets, fn func([]*node)) {
	for n := range bs.one.all {
		g.visitOne(n, fn)
	}
	for _, b := range bs.many {
		fn(b)
	}
}

// eachBucket visits the buckets of g that may hold a covering relation
// with u (in either direction; coverers: only members that may cover u):
// the members without equality, and for each set of point attributes
// the members have, the bucket of u's own values there if u has a point
// on each (see eqKey: related filters have the same points), else every
// bucket of the set; but none when looking for coverers of a u that
// leaves one of the attributes unconstrained or requires a prefix there
// (no member requiring one value there covers it, see strContains).
func (g *group) eachBucket(u *node, coverers bool, visit func([]*node)) {
	if len(g.plain) > 0 {
		visit(g.plain)
	}
	for _, bs := range g.byPoints {
		h, ok := uPoints(u, bs.attrs, coverers)
		switch {
		case h != 0:
			g.visit(bs, h, visit)
		case !ok:
			g.visitAll(bs, visit)
		}
	}
}

// uPoints returns the hash of u's points on attrs (as pointsHash would
// for a member with these points), or 0 and true when no member with
// points there can be related to u as asked (coverers: cover u), or 0
// and false when any may be.
func uPoints(u *node, attrs []string, coverers bool) (uint64, bool) {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for _, attr := range attrs {
		s, ok := spanOf(u, attr)
		if !ok {
			return 0, coverers
		}
		k, ok := spanKey(&s)
		if !ok {
			return 0, coverers && s.hasPrefix && !s.strRange
		}
		k.write(&h)
	}
	return nonZero(h.Sum64()), true
}

// pointsHash returns the byPoints key of k's points (their attributes,
// appended to buf) and the hash of their values; an empty key when k has
// no point.
func pointsHash(k *key, buf []byte) ([]byte, uint64) {
	var sb [2]span
	box := k.spans(&sb)
	for i := range box {
		if ek, ok := spanKey(&box[i]); ok {
			buf = append(append(buf, ek.attr...), pointSep...)
		}
	}
	return buf, valuesHash(k)
}

// valuesHash is the hash of k's point values, pointsHash's second result.
func valuesHash(k *key) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	var sb [2]span
	box := k.spans(&sb)
	for i := range box {
		if ek, ok := spanKey(&box[i]); ok {
			ek.write(&h)
		}
	}
	return nonZero(h.Sum64())
}

// bucketHash is valuesHash of a node, the hash of the one-node buckets.
func bucketHash(n *node) uint64 { return valuesHash(&n.key) }

// nonZero maps the hash 0 (uPoints' "none") to 1: only adds candidates.
func nonZero(h uint64) uint64 { return max(h, 1) }

// each visits every bucket of g.
func (g *group) each(visit func([]*node)) {
	if len(g.plain) > 0 {
		visit(g.plain)
	}
	for _, bs := range g.byPoints {
		g.visitAll(bs, visit)
	}
}

func (g *group) empty() bool { return len(g.plain) == 0 && len(g.byPoints) == 0 }

// eqKey is a point of a node: a string equality, or (num) a numeric span
// that is a single point, val then holding the point's
// float64 bits. Why points too: filters such as k == 12345 (ids) share one
// mask and no string equality, so without them every insert's candidates
// were every member of the group. Sound for both directions of covering:
// if a (satisfiable) filter's span on attr is the point p, every filter
// covering it or covered by it whose span there is a point has the point
// p too (their values lie in both spans), and a string and a number are
// never both required of one attribute by satisfiable filters.
type eqKey struct {
	attr, val string
	num       bool
}

// spanKey is s's equality key, if s requires one value.
func spanKey(s *span) (eqKey, bool) {
	switch {
	case s.hasEq:
		return eqKey{attr: s.attr, val: s.str}, true
	case s.lo == s.hi && !math.IsInf(s.lo, 0):
		v := s.lo
		if v == 0 {
			v = 0 // -0 and 0 are one point
		}
		b := math.Float64bits(v)
		return eqKey{attr: s.attr, val: string([]byte{byte(b >> 56), byte(b >> 48), byte(b >> 40), byte(b >> 32), byte(b >> 24), byte(b >> 16), byte(b >> 8), byte(b)}), num: true}, true
	}
	return eqKey{}, false
}

// write adds k's value and kind to h, which names a bucket (the length
// first, so that no two lists of values write the same bytes).
func (k eqKey) write(h *maphash.Hash) {
	var b [9]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(len(k.val)))
	if k.num {
		b[8] = 1
	}
	h.Write(b[:])
	h.WriteString(k.val)
}

// pointAttrs returns the attributes k has points on, in box order.
func pointAttrs(k *key) []string {
	var attrs []string
	var sb [2]span
	box := k.spans(&sb)
	for i := range box {
		if ek, ok := spanKey(&box[i]); ok {
			attrs = append(attrs, ek.attr)
		}
	}
	return attrs
}

func newCandIndex() *candIndex {
	return &candIndex{groups: make(map[uint64]*group)}
}

func (x *candIndex) add(n *node) {
	if !n.key.exact {
		n.ipos = int32(len(x.loose))
		x.loose = append(x.loose, n)
		return
	}
	g := x.groups[n.key.mask]
	if g == nil {
		g = newGroup()
		x.groups[n.key.mask] = g
	}
	var buf [64]byte
	if attrs, h := pointsHash(&n.key, buf[:0]); len(attrs) == 0 {
		n.ipos = int32(len(g.plain))
		g.plain = append(g.plain, n)
	} else {
		bs := g.byPoints[string(attrs)]
		if bs == nil {
			bs = &eqBuckets{attrs: pointAttrs(&n.key), one: newNodeTable(bucketHash)}
			g.byPoints[string(attrs)] = bs
		}
		bs.add(h, n)
	}
	for m := n.key.mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		x.bitCnt[b]++
		x.used |= 1 << b
	}
}

func (x *candIndex) remove(n *node) {
	if !n.key.exact {
		x.loose = swapRemove(x.loose, n.ipos)
		return
	}
	g := x.groups[n.key.mask]
	var buf [64]byte
	if attrs, h := pointsHash(&n.key, buf[:0]); len(attrs) == 0 {
		g.plain = swapRemove(g.plain, n.ipos)
	} else {
		bs := g.byPoints[string(attrs)]
		if bs.remove(h, n); bs.len() == 0 {
			delete(g.byPoints, string(attrs))
		}
	}
	if g.empty() {
		delete(x.groups, n.key.mask)
	}
	for m := n.key.mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		if x.bitCnt[b]--; x.bitCnt[b] == 0 {
			x.used &^= 1 << b
		}
	}
}

// swapRemove removes list[i] by moving the last element into its place and
// fixing that element's index position.
func swapRemove(list []*node, i int32) []*node {
	last := int32(len(list) - 1)
	list[i] = list[last]
	list[i].ipos = i
	list[last] = nil
	return list[:last]
}

// uEq returns the string equality u has on attr, if its box records one.
func uEq(u *node, attr string) (string, bool) {
	if s, ok := spanOf(u, attr); ok {
		return s.str, s.hasEq
	}
	return "", false
}

// coverers appends the candidates that may cover u, in seq order.
func (x *candIndex) coverers(u *node, dst []*node) []*node {
	start := len(dst)
	if g := x.groups[0]; g != nil {
		g.each(func(b []*node) { dst = append(dst, b...) }) // the match-all filter covers everything
	}
	if u.key.exact && !u.key.empty {
		visit := func(g *group) {
			// A bucket requiring attr == v can cover u unless u requires
			// another value or a prefix there.
			g.eachBucket(u, true, func(b []*node) { dst = appendContaining(dst, b, u) })
		}
		x.eachSubmask(u.key.mask, visit)
	}
	sortBySeq(dst[start:])
	return dst
}

// eachSubmask visits the groups whose mask is a non-empty subset of m.
func (x *candIndex) eachSubmask(m uint64, visit func(*group)) {
	if n := bits.OnesCount64(m); n <= maxEnumBits && 1<<n <= len(x.groups) {
		for sub := m; sub != 0; sub = (sub - 1) & m {
			if g := x.groups[sub]; g != nil {
				visit(g)
			}
		}
		return
	}
	for gm, g := range x.groups {
		if gm != 0 && gm&^m == 0 {
			visit(g)
		}
	}
}

// eachSupermask visits the groups whose mask is a superset of m.
func (x *candIndex) eachSupermask(m uint64, visit func(*group)) {
	free := x.used &^ m
	if n := bits.OnesCount64(free); n <= maxEnumBits && 1<<n <= len(x.groups) {
		for sub := free; ; sub = (sub - 1) & free {
			if g := x.groups[m|sub]; g != nil {
				visit(g)
			}
			if sub == 0 {
				return
			}
		}
	}
	for gm, g := range x.groups {
		if gm&m == m && gm != 0 {
			visit(g)
		}
	}
}

func appendContaining(dst, b []*node, u *node) []*node {
	var ub, wb [2]span
	ubox := u.key.spans(&ub)
	for _, w := range b {
		if boxesContain(&w.key, &u.key, &wb, ubox, false) {
			dst = append(dst, w)
		}
	}
	return dst
}

// boxesContain reports keyContains(w, u) (w's box holds u's), or with
// inner keyContains(u, w), given u's box (ubox) and a buffer for w's,
// which it builds only when w or u is not simple.
func boxesContain(w, u *key, wb *[2]span, ubox []span, inner bool) bool {
	if w.simple && u.simple {
		if inner {
			return simpleContains(u, w)
		}
		return simpleContains(w, u)
	}
	if inner {
		return boxContains(ubox, w.spans(wb))
	}
	return boxContains(w.spans(wb), ubox)
}

// covered appends the candidates that u may cover, in seq order.
func (x *candIndex) covered(u *node, dst []*node) []*node {
	start := len(dst)
	switch {
	case u.key.empty:
		for _, g := range x.groups {
			g.each(func(b []*node) { dst = append(dst, b...) })
		}
		dst = append(dst, x.loose...)
	case u.key.exact:
		x.eachSupermask(u.key.mask, func(g *group) {
			// Members requiring attr == w cannot be covered by a u
			// requiring attr == v with v != w.
			g.eachBucket(u, false, func(b []*node) { dst = appendContained(dst, b, u) })
		})
	}
	sortBySeq(dst[start:])
	return dst
}

func appendContained(dst, b []*node, u *node) []*node {
	var ub, wb [2]span
	ubox := u.key.spans(&ub)
	for _, w := range b {
		if boxesContain(&w.key, &u.key, &wb, ubox, true) {
			dst = append(dst, w)
		}
	}
	return dst
}

func sortBySeq(list []*node) {
	slices.SortFunc(list, func(a, b *node) int { return cmpSeq(a, b.seq) })
}
