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
// filters in one bftree or sbstree whose sources are the links, and
// decides where an event goes from its summary alone.
type Trees struct {
	p     bloom.Params
	tree  bloom.Tree
	links map[mesh.Link]map[string]*heldFilter // canonical text -> filter
	e     *bitset.BitSet                       // scratch summary
	cands []uint64
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
	tree, err := cfg.newTree()
	if err != nil {
		return nil, fmt.Errorf("bloom forwarding: %w", err)
	}
	return &Trees{p: cfg.Params, tree: tree, links: make(map[mesh.Link]map[string]*heldFilter), e: cfg.Params.NewFilter()}, nil
}

// Len returns the number of (link, filter) references held.
func (t *Trees) Len() int { return t.tree.Len() }

// Nodes returns the size of the tree.
func (t *Trees) Nodes() int { return t.tree.Nodes() }

// LinkUp starts holding filters from link l.
func (t *Trees) LinkUp(l mesh.Link) { t.links[l] = make(map[string]*heldFilter) }

// LinkDown drops every filter link l forwarded.
func (t *Trees) LinkDown(l mesh.Link) {
	for _, h := range t.links[l] {
		for range h.n {
			t.mustDelete(h.bits, l)
		}
	}
	delete(t.links, l)
}

// Routes applies a Routes message that router/mesh accepted from link l
// (the mesh checked sequence and removals; this repeats the checks it
// needs and changes nothing on error).
func (t *Trees) Routes(l mesh.Link, r *wire.Routes) error {
	held, ok := t.links[l]
	if !ok {
		return nil
	}
	net, err := t.change(held, r)
	if err != nil {
		return fmt.Errorf("bloom trees: routes from link %d: %w", l, err)
	}
	for _, text := range slices.Sorted(maps.Keys(net)) {
		c := net[text]
		h := held[text]
		if h == nil {
			h = &heldFilter{bits: t.p.Encode(c.f)}
			held[text] = h
		}
		for ; c.n > 0; c.n-- {
			t.tree.Insert(h.bits, uint64(l))
			h.n++
		}
		for ; c.n < 0; c.n++ {
			t.mustDelete(h.bits, l)
			h.n--
		}
		if h.n == 0 {
			delete(held, text)
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

func (t *Trees) mustDelete(bits *bitset.BitSet, l mesh.Link) {
	if err := t.tree.Delete(bits, uint64(l)); err != nil {
		panic(fmt.Sprintf("bloomfwd: tree lost a filter of link %d: %v", l, err)) // held mirrors the tree
	}
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
	t.cands = t.tree.Match(t.e, t.cands[:0])
	start := len(dst)
	for _, src := range t.cands {
		l := mesh.Link(src)
		if l != from && !slices.Contains(dst[start:], l) {
			dst = append(dst, l)
		}
	}
	slices.Sort(dst[start:])
	return dst, nil
}
