package betree

import (
	"slices"

	"github.com/sift-pubsub/sift/baseline/internal/interval"
	"github.com/sift-pubsub/sift/baseline/internal/num"
)

// cnode is a cluster node: an l-node of subscriptions (leaf, which
// overflows beyond capacity) and a partition directory (pdir). bucket is
// the clustering-directory entry holding the c-node, nil at the root.
type cnode struct {
	leaf     []*sub
	capacity int
	pdir     []*pnode
	bucket   *cdir
}

// pnode is a partition node: an attribute and the root of its clustering
// directory. parent is the c-node whose partition directory holds it;
// count is the number of subscriptions stored under it.
type pnode struct {
	attr   string
	root   *cdir
	parent *cnode
	count  int
}

// cdir is one bucket of a clustering directory: the values [lo, hi) of
// the configured domain, the first bucket of a level extended to minus
// infinity and the last to plus infinity. A split bucket's halves meet at
// mid; values below it belong to left.
type cdir struct {
	lo, hi, mid float64
	depth       int
	node        *cnode
	left, right *cdir
	parent      *cdir
	owner       *pnode
}

func (x *Index) newCnode(b *cdir) *cnode {
	return &cnode{capacity: x.cfg.Capacity, bucket: b}
}

func (x *Index) newBucket(owner *pnode, parent *cdir, lo, hi float64, depth int) *cdir {
	b := &cdir{lo: lo, hi: hi, mid: lo + (hi-lo)/2, depth: depth, parent: parent, owner: owner}
	b.node = x.newCnode(b)
	return b
}

// childOf returns the child bucket holding value k, nil when b is not
// split.
func (b *cdir) childOf(k num.Key) *cdir {
	if b.left == nil {
		return nil
	}
	if num.Less(k, num.Key{F: b.mid}) {
		return b.left
	}
	return b.right
}

// enclosingChild returns the child bucket containing the whole interval,
// or nil (b is not split, or the interval straddles mid). The interval is
// inside b already, so only mid decides.
func (b *cdir) enclosingChild(iv *interval.Interval) *cdir {
	if b.left == nil {
		return nil
	}
	m := num.Key{F: b.mid}
	if num.Less(iv.Hi, m) || iv.Hi == m && iv.HiOpen {
		return b.left
	}
	if !num.Less(iv.Lo, m) {
		return b.right
	}
	return nil
}

// smallest returns the smallest existing bucket under b that encloses the
// interval (the paper's insertCdir).
func (b *cdir) smallest(iv *interval.Interval) *cdir {
	for {
		c := b.enclosingChild(iv)
		if c == nil {
			return b
		}
		b = c
	}
}

// splittable reports whether b is a leaf bucket above the atomic depth.
func (x *Index) splittable(b *cdir) bool { return b.left == nil && b.depth < x.cfg.MaxDepth }

// insert is the paper's insertion: descend through the best-ranked
// p-node of an attribute s constrains into the smallest bucket enclosing
// its interval, and on from that bucket's c-node; where no p-node fits,
// store s in the l-node and relieve an overflow, by space partitioning at
// the root and by space clustering in a clustering directory.
func (x *Index) insert(n *cnode, s *sub) {
	for {
		p, iv := x.bestPnode(n, s)
		if p == nil {
			break
		}
		p.count++
		n = p.root.smallest(iv).node
	}
	x.store(n, s)
	if n.bucket == nil {
		x.partition(n)
	} else {
		x.cluster(n.bucket)
	}
}

// store appends s to n's l-node.
func (x *Index) store(n *cnode, s *sub) {
	s.home = n
	n.leaf = append(n.leaf, s)
}

// cluster is the paper's space clustering of an overflowing bucket: a
// leaf bucket above the atomic depth splits in halves, each taking the
// subscriptions whose interval it encloses (and clustering them in
// turn; a split that would move nothing is not made); if the l-node
// still overflows, the c-node is partitioned.
func (x *Index) cluster(b *cdir) {
	n := b.node
	if len(n.leaf) <= n.capacity {
		return
	}
	if x.splittable(b) {
		lo, hi := b.lo, b.hi
		b.left = x.newBucket(b.owner, b, lo, b.mid, b.depth+1)
		b.right = x.newBucket(b.owner, b, b.mid, hi, b.depth+1)
		kept := n.leaf[:0]
		for _, s := range n.leaf {
			if c := b.enclosingChild(s.interval(b.owner.attr)); c != nil {
				x.store(c.node, s)
			} else {
				kept = append(kept, s)
			}
		}
		clear(n.leaf[len(kept):])
		n.leaf = kept
		if b.left.empty() && b.right.empty() {
			b.left, b.right = nil, nil // every interval straddles mid
		} else {
			x.cluster(b.left)
			x.cluster(b.right)
		}
	}
	if len(n.leaf) > n.capacity {
		x.partition(n)
	}
}

// partition is the paper's space partitioning of an overflowing c-node:
// while the l-node overflows, a p-node is opened for the attribute the
// cost model ranks best (none used on the path here, none already in the
// directory), every subscription constraining it moves into the p-node's
// clustering directory, and that directory is clustered. When no
// attribute is worth a p-node, the l-node's capacity grows (the paper's
// cluster-capacity update; see capacityFor).
func (x *Index) partition(n *cnode) {
	for len(n.leaf) > n.capacity {
		attr, ok := x.bestAttr(n)
		if !ok {
			break
		}
		p := &pnode{attr: attr, parent: n}
		p.root = x.newBucket(p, nil, x.cfg.Lo, x.cfg.Hi, 0)
		n.pdir = append(n.pdir, p)
		kept := n.leaf[:0]
		for _, s := range n.leaf {
			if s.interval(attr) != nil {
				p.count++
				x.store(p.root.node, s)
			} else {
				kept = append(kept, s)
			}
		}
		clear(n.leaf[len(kept):])
		n.leaf = kept
		x.cluster(p.root)
	}
	n.capacity = x.capacityFor(len(n.leaf))
}

// capacityFor is the capacity of an l-node of size subscriptions after a
// partitioning attempt: Capacity when that relieved it, else the multiple
// of Capacity at or above twice its size, so that the attempts an l-node
// nothing relieves costs are paid once per doubling of its size.
func (x *Index) capacityFor(size int) int {
	a := x.cfg.Capacity
	if size <= a {
		return a
	}
	return (2*size + a - 1) / a * a
}

// pathAttrs returns the attributes partitioned on the way from the root
// to n.
func pathAttrs(n *cnode) []string {
	var attrs []string
	for n.bucket != nil {
		p := n.bucket.owner
		attrs = append(attrs, p.attr)
		n = p.parent
	}
	return attrs
}

// remove takes s out of its l-node and trims the directories it leaves
// empty.
func (x *Index) remove(s *sub) {
	n := s.home
	i := slices.Index(n.leaf, s)
	n.leaf[i] = n.leaf[len(n.leaf)-1]
	n.leaf[len(n.leaf)-1] = nil
	n.leaf = n.leaf[:len(n.leaf)-1]
	s.home = nil
	for c := n; c.bucket != nil; c = c.bucket.owner.parent {
		c.bucket.owner.count--
	}
	x.trim(n)
}

// trim removes the empty directories at and above n: a split bucket
// whose halves hold nothing loses them, and a p-node whose directory
// holds nothing leaves its partition directory; the walk goes up while
// what it removed leaves its parent empty.
func (x *Index) trim(n *cnode) {
	for n.bucket != nil {
		b := n.bucket
		if b.left != nil && b.left.empty() && b.right.empty() {
			b.left, b.right = nil, nil
		}
		if !b.empty() {
			return
		}
		if b.parent != nil {
			n = b.parent.node
			continue
		}
		p := b.owner
		p.parent.pdir = slices.DeleteFunc(p.parent.pdir, func(q *pnode) bool { return q == p })
		n = p.parent
	}
}

// empty reports whether a bucket holds nothing: no subscriptions, no
// partitions, no halves.
func (b *cdir) empty() bool {
	return len(b.node.leaf) == 0 && len(b.node.pdir) == 0 && b.left == nil
}
