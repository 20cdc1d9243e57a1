package bloomfwd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/bits-and-blooms/bitset"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Trees holds the filters each link forwarded to this router, as Bloom
// filters in one bftree or sbstree per link, and decides where an event
// goes from its summary alone: to each link whose tree holds a filter the
// summary contains, found by a walk that stops at the first.
type Trees struct {
	cfg   Config
	links map[mesh.Link]*linkTree
	order []mesh.Link    // links up, increasing
	e     *bitset.BitSet // scratch summary
	n     int            // (link, filter) references held
}

// linkTree is one link's tree and the filters it holds.
type linkTree struct {
	tree bloom.Tree
	held map[string]*heldFilter // canonical text -> filter
	// byWitness finds the held filters by witness (wire.FilterHash of
	// the canonical text; several when hashes collide): witness.go.
	byWitness map[uint64][]*heldFilter
}

// anyMatcher is what bftree and sbstree add to bloom.Tree: whether any
// stored filter is contained in a summary, stopping at the first.
type anyMatcher interface {
	MatchAny(e *bitset.BitSet) bool
}

// heldFilter is one distinct filter a link forwarded, with its Bloom
// filter and how many times the link holds it.
type heldFilter struct {
	bits *bitset.BitSet
	n    int
}

// NewTrees returns empty trees of cfg's kind.
func NewTrees(cfg Config) (*Trees, error) {
	cfg, err := cfg.resolved()
	if err != nil {
		return nil, err
	}
	if _, err := cfg.newTree(); err != nil {
		return nil, fmt.Errorf("bloom forwarding: %w", err)
	}
	return &Trees{cfg: cfg, links: make(map[mesh.Link]*linkTree), e: cfg.Params.NewFilter()}, nil
}

// Len returns the number of (link, filter) references held.
func (t *Trees) Len() int { return t.n }

// Nodes returns the size of the trees.
func (t *Trees) Nodes() int {
	n := 0
	for _, lt := range t.links {
		n += lt.tree.Nodes()
	}
	return n
}

// LinkUp starts holding filters from link l.
func (t *Trees) LinkUp(l mesh.Link) {
	if _, ok := t.links[l]; ok {
		return
	}
	tree, _ := t.cfg.newTree() // NewTrees built one with this config
	t.links[l] = &linkTree{tree: tree, held: make(map[string]*heldFilter), byWitness: make(map[uint64][]*heldFilter)}
	t.order = append(t.order, l)
	slices.Sort(t.order)
}

// LinkDown drops every filter link l forwarded.
func (t *Trees) LinkDown(l mesh.Link) {
	if lt, ok := t.links[l]; ok {
		t.n -= lt.tree.Len()
	}
	delete(t.links, l)
	t.order = slices.DeleteFunc(t.order, func(x mesh.Link) bool { return x == l })
}

// Routes applies a Routes message that router/mesh accepted from link l
// (the mesh checked sequence and removals; this repeats the checks it
// needs and changes nothing on error).
func (t *Trees) Routes(l mesh.Link, r *wire.Routes) error {
	lt, ok := t.links[l]
	if !ok {
		return nil
	}
	held := lt.held
	net, err := t.change(held, r)
	if err != nil {
		return fmt.Errorf("bloom trees: routes from link %d: %w", l, err)
	}
	for _, text := range slices.Sorted(maps.Keys(net)) {
		c := net[text]
		h := held[text]
		if h == nil {
			h = &heldFilter{bits: t.cfg.Params.Encode(c.f)}
			held[text] = h
			lt.addWitness(text, h)
		}
		for ; c.n > 0; c.n-- {
			lt.tree.Insert(h.bits, uint64(l))
			h.n++
			t.n++
		}
		for ; c.n < 0; c.n++ {
			if err := lt.tree.Delete(h.bits, uint64(l)); err != nil {
				panic(fmt.Sprintf("bloomfwd: tree lost a filter of link %d: %v", l, err)) // held mirrors the tree
			}
			h.n--
			t.n--
		}
		if h.n == 0 {
			delete(held, text)
			lt.dropWitness(text, h)
		}
	}
	return nil
}

type netFilter struct {
	f match.Filter
	n int
}

// change parses r into the net change of each filter against held.
func (t *Trees) change(held map[string]*heldFilter, r *wire.Routes) (map[string]*netFilter, error) {
	net := make(map[string]*netFilter)
	if r.Snapshot {
		for text, h := range held {
			net[text] = &netFilter{n: -h.n}
		}
	}
	count := func(text string, delta int) error {
		f, err := match.Parse(text)
		if err != nil {
			return fmt.Errorf("filter %q: %w", text, err)
		}
		key := f.String()
		c := net[key]
		if c == nil {
			c = &netFilter{}
			net[key] = c
		}
		c.f, c.n = f, c.n+delta
		if h := held[key]; (h == nil && c.n < 0) || (h != nil && h.n+c.n < 0) {
			return fmt.Errorf("removes %q, which it never sent", text)
		}
		return nil
	}
	for _, text := range r.Remove {
		if err := count(text, -1); err != nil {
			return nil, err
		}
	}
	for _, text := range r.Add {
		if err := count(text, 1); err != nil {
			return nil, err
		}
	}
	return net, nil
}

// Route appends to dst the links, in increasing order, whose neighbour
// forwarded a filter that summary contains, except from (0: the event
// came from a local client). A summary of the wrong size (a peer with
// other parameters) is an error.
func (t *Trees) Route(summary []uint64, from mesh.Link, dst []mesh.Link) ([]mesh.Link, error) {
	w := t.e.Words()
	if len(summary) != len(w) {
		return dst, fmt.Errorf("bloom summary of %d bits, want %d", 64*len(summary), 64*len(w))
	}
	copy(w, summary)
	for _, l := range t.order {
		if l != from && t.links[l].matchAny(t.e) {
			dst = append(dst, l)
		}
	}
	return dst, nil
}

// matchAny reports whether the link's tree holds a filter e contains.
func (lt *linkTree) matchAny(e *bitset.BitSet) bool {
	if a, ok := lt.tree.(anyMatcher); ok {
		return a.MatchAny(e)
	}
	var buf [8]uint64
	return len(lt.tree.Match(e, buf[:0])) > 0
}
