package betree

import (
	"fmt"
	"math"

	"github.com/sift-pubsub/sift/baseline"
	"github.com/sift-pubsub/sift/baseline/internal/interval"
	"github.com/sift-pubsub/sift/baseline/internal/num"
	"github.com/sift-pubsub/sift/match"
)

// Config configures a BE-Tree. A zero field takes the default written
// beside it.
type Config struct {
	// Lo and Hi are the value range the root bucket of every clustering
	// directory covers (default 0 and 1,000,000); the cost model takes
	// event values to be spread evenly over it.
	Lo, Hi float64
	// Capacity is the paper's maximum l-node capacity A: an l-node holding
	// more subscriptions overflows (default 20).
	Capacity int
	// MaxDepth is the deepest bucket level of a clustering directory: a
	// bucket at that depth is atomic and never split (default 20).
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
		Description: "baseline: BE-Tree (Sadoghi and Jacobsen 2011), cost-based partitioning and clustering directories over l-nodes",
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
	id    match.ID
	f     match.Filter
	ivs   []interval.Interval // numeric intervals by attribute, for descending
	gains []float64           // the cost model's gain of each interval
	home  *cnode
}

// index returns the position of s's interval on attr, or -1.
func (s *sub) index(attr string) int {
	for i := range s.ivs {
		if s.ivs[i].Attr == attr {
			return i
		}
	}
	return -1
}

// interval returns s's interval on attr, or nil.
func (s *sub) interval(attr string) *interval.Interval {
	if i := s.index(attr); i >= 0 {
		return &s.ivs[i]
	}
	return nil
}

// New returns an empty BE-Tree.
func New(cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	x := &Index{cfg: cfg, subs: make(map[match.ID]*sub)}
	x.root = x.newCnode(nil)
	return x, nil
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
	ivs := intervals(f)
	s := &sub{id: id, f: f, ivs: ivs, gains: x.gains(ivs)}
	x.subs[id] = s
	x.insert(x.root, s)
	return nil
}

// Delete removes a subscription and trims the directories it leaves
// empty.
func (x *Index) Delete(id match.ID) error {
	s, ok := x.subs[id]
	if !ok {
		return fmt.Errorf("betree: subscription %d not present", id)
	}
	delete(x.subs, id)
	x.remove(s)
	return nil
}

// Len returns the number of subscriptions.
func (x *Index) Len() int { return len(x.subs) }

// Match appends the subscriptions the event matches: those of every
// visited l-node whose filter holds. From each visited c-node the search
// goes through every p-node whose attribute the event gives a number,
// down the clustering directory along the buckets containing that value.
func (x *Index) Match(e match.Event, dst []match.ID) []match.ID {
	return x.match(x.root, e, dst)
}

func (x *Index) match(n *cnode, e match.Event, dst []match.ID) []match.ID {
	for _, s := range n.leaf {
		if s.f.Matches(e) {
			dst = append(dst, s.id)
		}
	}
	for _, p := range n.pdir {
		v, present := e.Get(p.attr)
		if !present {
			continue
		}
		k, ok := num.Of(v)
		if !ok {
			continue
		}
		for d := p.root; d != nil; d = d.childOf(k) {
			dst = x.match(d.node, e, dst)
		}
	}
	return dst
}
