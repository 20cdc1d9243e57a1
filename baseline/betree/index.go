package betree

import (
	"fmt"
	"math"
	"sort"

	"github.com/sift-pubsub/sift/baseline"
	"github.com/sift-pubsub/sift/baseline/internal/interval"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
)

// Config configures a BE-Tree. A zero field takes the default written
// beside it.
type Config struct {
	// Lo and Hi are the value range the root buckets split
	// (default 0 and 1,000,000).
	Lo, Hi float64
	// Capacity is the number of subscriptions an l-node holds before it
	// splits (default 20).
	Capacity int
	// MaxDepth is the deepest bucket level (default 20).
	MaxDepth int
}

func (c Config) withDefaults() Config {
	if c.Lo == 0 && c.Hi == 0 {
		c.Hi = 1_000_000
	}
	if c.Capacity == 0 {
		c.Capacity = 20
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = 20
	}
	return c
}

// Validate reports why the configuration (after defaults) is unusable.
func (c Config) Validate() error {
	c = c.withDefaults()
	if !(c.Lo < c.Hi) || math.IsInf(c.Lo, 0) || math.IsInf(c.Hi, 0) || c.Capacity < 1 || c.MaxDepth < 0 || c.MaxDepth > 60 {
		return fmt.Errorf("betree: want finite Lo < Hi, Capacity >= 1 and MaxDepth in [0, 60], got [%v, %v), %d, %d",
			c.Lo, c.Hi, c.Capacity, c.MaxDepth)
	}
	return nil
}

func init() {
	match.RegisterIndex(match.IndexInfo{
		Name:        "betree",
		Description: "baseline: BE-Tree (Sadoghi and Jacobsen 2011), partition and clustering directories over l-nodes",
		New:         baseline.MustDefault(New),
	})
}

// Index is a BE-Tree.
type Index struct {
	cfg  Config
	root *cnode
	subs map[match.ID]*sub
}

// sub is one stored subscription.
type sub struct {
	id   match.ID
	f    match.Filter
	ivs  []interval.Interval // numeric intervals by attribute, for descending
	home *cnode
}

// cnode is a cluster node: an l-node of subscriptions and a partition
// directory. used lists the attributes partitioned on the way here.
type cnode struct {
	leaf   []*sub
	parts  map[string]*bucket // p-nodes: the root bucket of each attribute's clustering directory
	used   map[string]bool
	bucket *bucket // the bucket holding this c-node; nil at the root
}

// bucket is one bucket of a clustering directory over attribute attr:
// the values of the domain range [dlo, dhi), the first and last buckets of
// a level extended to minus and plus infinity. Once split, values below
// mid belong to left, the others to right.
type bucket struct {
	attr        string
	dlo, dhi    float64
	mid         float64
	depth       int
	node        *cnode
	left, right *bucket
}

func newBucket(attr string, dlo, dhi float64, depth int, used map[string]bool) *bucket {
	b := &bucket{attr: attr, dlo: dlo, dhi: dhi, mid: dlo + (dhi-dlo)/2, depth: depth}
	b.node = &cnode{used: used, bucket: b}
	return b
}

// childOf returns the child bucket holding value k (the bucket is split).
func (b *bucket) childOf(k num.Key) *bucket {
	if num.Less(k, num.Key{F: b.mid}) {
		return b.left
	}
	return b.right
}

// New returns an empty BE-Tree.
func New(cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Index{cfg: cfg, root: &cnode{used: map[string]bool{}}, subs: make(map[match.ID]*sub)}, nil
}

// intervals folds the numeric comparison constraints of f into one
// interval per attribute; attributes with other constraints too keep the
// interval of their comparisons (the rest is checked at the l-node).
func intervals(f match.Filter) []interval.Interval {
	var cs []match.Constraint
	for i := range f.Len() {
		if c := f.At(i); interval.Supported("betree", c) == nil {
			cs = append(cs, c)
		}
	}
	ivs, _ := interval.FromFilter("betree", match.MustFilter(cs...))
	return ivs
}

// Insert adds a subscription; every constraint is supported.
func (x *Index) Insert(id match.ID, f match.Filter) error {
	if _, dup := x.subs[id]; dup {
		return fmt.Errorf("betree: subscription %d already present", id)
	}
	s := &sub{id: id, f: f, ivs: intervals(f)}
	x.subs[id] = s
	x.place(x.root, s)
	return nil
}

// Delete removes a subscription.
func (x *Index) Delete(id match.ID) error {
	s, ok := x.subs[id]
	if !ok {
		return fmt.Errorf("betree: subscription %d not present", id)
	}
	leaf := s.home.leaf
	for i, t := range leaf {
		if t == s {
			leaf[i] = leaf[len(leaf)-1]
			leaf[len(leaf)-1] = nil
			s.home.leaf = leaf[:len(leaf)-1]
			break
		}
	}
	delete(x.subs, id)
	return nil
}

// Len returns the number of subscriptions.
func (x *Index) Len() int { return len(x.subs) }

// place stores s as deep under n as it can go, then splits the l-node
// it lands in if that overflows.
func (x *Index) place(n *cnode, s *sub) {
	for {
		next := x.descend(n, s)
		if next == nil {
			break
		}
		n = next
	}
	s.home = n
	n.leaf = append(n.leaf, s)
	if len(n.leaf) > x.cfg.Capacity {
		x.split(n)
	}
}

// descend returns the c-node under n that s goes into: through the first
// (by name) p-node of an attribute s has an interval on, into the deepest
// existing bucket containing that interval; nil when s stays at n.
func (x *Index) descend(n *cnode, s *sub) *cnode {
	for i := range s.ivs {
		b := n.parts[s.ivs[i].Attr]
		if b == nil {
			continue
		}
		for {
			child := b.childContaining(&s.ivs[i])
			if child == nil {
				return b.node
			}
			b = child
		}
	}
	return nil
}

// childContaining returns the child bucket containing the whole interval,
// or nil.
func (b *bucket) childContaining(iv *interval.Interval) *bucket {
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

// split relieves an overflowing l-node: by splitting the bucket it heads
// when the halves take some of its subscriptions (space clustering), else
// by partitioning it on a new attribute (space partitioning).
func (x *Index) split(n *cnode) {
	if b := n.bucket; b != nil && b.left == nil && b.depth < x.cfg.MaxDepth {
		b.left = newBucket(b.attr, b.dlo, b.mid, b.depth+1, n.used)
		b.right = newBucket(b.attr, b.mid, b.dhi, b.depth+1, n.used)
		old := n.leaf
		n.leaf = nil
		for _, s := range old {
			if iv := s.interval(b.attr); iv != nil {
				if child := b.childContaining(iv); child != nil {
					x.place(child.node, s)
					continue
				}
			}
			s.home = n
			n.leaf = append(n.leaf, s)
		}
		if len(n.leaf) <= x.cfg.Capacity {
			return
		}
	}
	x.partition(n)
	// With no attribute left to partition on, the l-node grows.
}

// interval returns s's interval on attr, or nil.
func (s *sub) interval(attr string) *interval.Interval {
	for i := range s.ivs {
		if s.ivs[i].Attr == attr {
			return &s.ivs[i]
		}
	}
	return nil
}

// partition creates, for the attribute most subscriptions of n's l-node
// have an interval on (and not used on the path), a p-node under n, and
// moves those subscriptions into it. It reports whether any moved.
func (x *Index) partition(n *cnode) bool {
	counts := map[string]int{}
	for _, s := range n.leaf {
		for _, iv := range s.ivs {
			if !n.used[iv.Attr] && n.parts[iv.Attr] == nil {
				counts[iv.Attr]++
			}
		}
	}
	if len(counts) == 0 {
		return false
	}
	names := make([]string, 0, len(counts))
	for a := range counts {
		names = append(names, a)
	}
	sort.Strings(names)
	best := names[0]
	for _, a := range names {
		if counts[a] > counts[best] {
			best = a
		}
	}
	if n.parts == nil {
		n.parts = map[string]*bucket{}
	}
	used := map[string]bool{best: true}
	for a := range n.used {
		used[a] = true
	}
	n.parts[best] = newBucket(best, x.cfg.Lo, x.cfg.Hi, 0, used)
	x.reinsert(n)
	return true
}

// reinsert places the l-node's subscriptions again from n, so those that
// can now descend do.
func (x *Index) reinsert(n *cnode) {
	old := n.leaf
	n.leaf = nil
	for _, s := range old {
		x.placeFrom(n, s)
	}
}

// placeFrom is place without splitting at n itself (n is being split).
func (x *Index) placeFrom(n *cnode, s *sub) {
	next := x.descend(n, s)
	if next == nil {
		s.home = n
		n.leaf = append(n.leaf, s)
		return
	}
	x.place(next, s)
}

// Match appends the subscriptions the event matches: those of every
// visited l-node whose filter holds, descending from each c-node through
// the p-nodes of the event's attributes into the buckets containing the
// event's values.
func (x *Index) Match(e match.Event, dst []match.ID) []match.ID {
	return x.match(x.root, e, dst)
}

func (x *Index) match(n *cnode, e match.Event, dst []match.ID) []match.ID {
	for _, s := range n.leaf {
		if s.f.Matches(e) {
			dst = append(dst, s.id)
		}
	}
	if len(n.parts) == 0 {
		return dst
	}
	for attr, b := range n.parts {
		v, present := e.Get(attr)
		k, ok := num.Of(v)
		if !present || !ok {
			continue
		}
		for b != nil {
			dst = x.match(b.node, e, dst)
			if b.left == nil {
				break
			}
			b = b.childOf(k)
		}
	}
	return dst
}
