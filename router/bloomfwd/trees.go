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
	// byWitness holds the distinct filters the link holds by witness
	// (wire.FilterHash of the canonical text; several when hashes
	// collide): the lookup of held filters and of RouteWitness
	// (witness.go) alike, with no text kept.
	byWitness map[uint64][]*heldFilter
}

// anyMatcher is what bftree and sbstree add to bloom.Tree: whether any
// stored filter is contained in a summary, stopping at the first.
type anyMatcher interface {
	MatchAny(e *bitset.BitSet) bool
}

// heldFilter is one distinct filter a link forwarded (the parsed form
// the mesh holds, shared), with its Bloom filter and how many times the
// link holds it.
type heldFilter struct {
	f    match.Filter
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
	t.links[l] = &linkTree{tree: tree, byWitness: make(map[uint64][]*heldFilter)}
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

// ApplyHeld applies to link l's tree the net change a Routes message
// that router/mesh accepted made to what the link holds
// (mesh.HeldChange): one copy of each filter of remove goes, one of each
// of add comes. The filters are the mesh's parsed ones, kept as they are,
// so a forwarded filter is parsed once. Removing more copies of a filter
// than the link holds is an error that changes nothing. A link not up is
// ignored.
func (t *Trees) ApplyHeld(l mesh.Link, add, remove []match.Filter) error {
	lt, ok := t.links[l]
	if !ok {
		return nil
	}
	if err := lt.checkRemovals(remove); err != nil {
		return fmt.Errorf("bloom trees: routes from link %d: %w", l, err)
	}
	for _, f := range add {
		h := lt.find(f)
		if h == nil {
			h = lt.hold(f, t.cfg.Params.Encode(f))
		}
		lt.tree.Insert(h.bits, uint64(l))
		h.n++
		t.n++
	}
	for _, f := range remove {
		h := lt.find(f)
		if err := lt.tree.Delete(h.bits, uint64(l)); err != nil {
			panic(fmt.Sprintf("bloomfwd: tree lost a filter of link %d: %v", l, err)) // byWitness mirrors the tree
		}
		t.n--
		if h.n--; h.n == 0 {
			lt.drop(h)
		}
	}
	return nil
}

// checkRemovals reports a filter of remove that the link holds fewer
// copies of than remove names.
func (lt *linkTree) checkRemovals(remove []match.Filter) error {
	var taken map[*heldFilter]int
	for _, f := range remove {
		h := lt.find(f)
		if h != nil && taken == nil {
			taken = make(map[*heldFilter]int)
		}
		if h == nil || taken[h] == h.n {
			return fmt.Errorf("removes %q, which it never sent", f)
		}
		taken[h]++
	}
	return nil
}

// Routes applies a Routes message that router/mesh accepted from link l,
// parsing its texts: a snapshot replaces what the link holds, an
// incremental message removes, then adds. A router applies the mesh's
// parsed change with ApplyHeld instead; Routes is for trees fed Routes
// alone. It changes nothing on error.
func (t *Trees) Routes(l mesh.Link, r *wire.Routes) error {
	lt, ok := t.links[l]
	if !ok {
		return nil
	}
	add, err := parseAll(r.Add)
	if err != nil {
		return fmt.Errorf("bloom trees: routes from link %d: %w", l, err)
	}
	remove, err := parseAll(r.Remove)
	if err != nil {
		return fmt.Errorf("bloom trees: routes from link %d: %w", l, err)
	}
	if r.Snapshot {
		remove = lt.all()
	}
	return t.ApplyHeld(l, add, remove)
}

func parseAll(texts []string) ([]match.Filter, error) {
	fs := make([]match.Filter, len(texts))
	for i, text := range texts {
		f, err := match.ParseCompact(text)
		if err != nil {
			return nil, fmt.Errorf("filter %q: %w", text, err)
		}
		fs[i] = f
	}
	return fs, nil
}

// all lists every copy of every filter the link holds, in witness order
// (the trees change deterministically).
func (lt *linkTree) all() []match.Filter {
	var fs []match.Filter
	for _, w := range slices.Sorted(maps.Keys(lt.byWitness)) {
		for _, h := range lt.byWitness[w] {
			for range h.n {
				fs = append(fs, h.f)
			}
		}
	}
	return fs
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
