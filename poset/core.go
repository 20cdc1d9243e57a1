package poset

import (
	"fmt"
	"math"
	"slices"

	"github.com/sift-pubsub/sift/match"
)

// Config configures a Poset or a Forest. The zero Config is the default.
type Config struct {
	// Classic turns the covering-candidate index off, so that inserts run
	// the published algorithms alone, testing siblings one by one. Zero:
	// the index is used once a node set has 32 members (all nodes for the
	// poset, the roots for the forest).
	Classic bool
}

// algorithm is what distinguishes the poset from the forest: where a new
// node goes and how the structure heals when one leaves.
type algorithm interface {
	// place links the new node u into the structure, or returns an existing
	// node equivalent to u (leaving u unlinked).
	place(c *core, u *node) *node
	// unlink removes u and returns the nodes whose ancestors changed.
	unlink(c *core, u *node) []*node
}

// core holds the state and the operations that the poset and the forest
// share: subscriptions by id, the node sets, matching and counters.
type core struct {
	alg  algorithm
	name string
	// byID holds each subscription's node. In a core a Table owns
	// (textIDs), it holds only the subscriptions whose filter is not
	// their node's own (an equivalent filter of another text): the Table
	// names every subscription by its canonical text as well, and a
	// subscription whose filter is its node's is found through byText.
	// Why: a map slot per subscription was the largest cost after the
	// node itself in a router holding many filters, almost every one the
	// only filter of its node.
	byID    map[match.ID]*node
	textIDs bool
	// others holds the filters of the subscriptions whose filter is not
	// their node's own (see entry).
	others map[match.ID]match.Filter
	void   map[match.ID]voided // unsatisfiable subscriptions, kept aside
	byText nodeTable           // representative text -> node (textKey)
	roots  nodeSet
	// all holds every node when its candidate index is on (the poset's
	// inserts query it); otherwise nothing reads it whole, and only the
	// count (nodes) is kept: a list of every node cost 9 bytes a node
	// and more as it grew.
	all    nodeSet
	nodes  int
	seq    uint64
	epoch  uint64
	gen    uint64      // bumped by every structural change
	rtoTok uint64      // token of the latest RTO placement
	rtoMem *rtoScratch // a finished placement's memory, for the next one
	tests  uint64      // covering tests so far
	ctr    Counters
	subs   int
	fixed  []fixedFilter // FF fixed filters, in pinning order
	// attribute names interned for key.eqAttr
	attrIDs map[string]int32
	buf     []*node
}

func newCore(name string, alg algorithm, indexAll, indexRoots bool) *core {
	return &core{
		alg:    alg,
		name:   name,
		byID:   make(map[match.ID]*node),
		void:   make(map[match.ID]voided),
		others: make(map[match.ID]match.Filter),
		byText: newNodeTable(textKey),
		roots:  nodeSet{indexing: indexRoots, cached: true},
		all:    nodeSet{indexing: indexAll},
	}
}

// voided is a subscription kept aside (an unsatisfiable filter).
type voided struct {
	entry
	f match.Filter
}

// covers is the counted covering test: does a cover b?
func (c *core) covers(a, b *node) bool {
	c.tests++
	return relates(&a.key, &b.key)
}

// newEpoch invalidates every node's scratch flags.
func (c *core) newEpoch() { c.epoch++ }

// touch resets n's scratch flags if they belong to an earlier epoch.
func (c *core) touch(n *node) *node {
	if n.mark != c.epoch {
		n.mark = c.epoch
		n.upDone, n.up, n.downDone, n.down = false, false, false, false
		n.queued, n.visited = false, false
	}
	return n
}

// testUp reports (once per epoch) whether w covers u.
func (c *core) testUp(w, u *node) bool {
	c.touch(w)
	if !w.upDone {
		w.up, w.upDone = c.covers(w, u), true
	}
	return w.up
}

// testDown reports (once per epoch) whether u covers w.
func (c *core) testDown(w, u *node) bool {
	c.touch(w)
	if !w.downDone {
		w.down, w.downDone = c.covers(u, w), true
	}
	return w.down
}

func (c *core) newNode(f match.Filter, text string) *node {
	c.seq++
	n := &node{seq: c.seq, key: newKey(f), text: text}
	c.sign(&n.key)
	return n
}

// sign records in k its first string equality as an interned attribute
// id and a hash of the value, so that disjoint can tell two filters of
// different symbols apart without reading their boxes; and, when the box
// is no more than one string equality and one numeric interval (simple),
// the interval, so that disjoint needs nothing else. A box with a prefix
// is not simple: the fields keep no prefix, and mayCover must tell a
// prefix from an equality as boxContains does. A simple key drops its
// box: key.spans rebuilds it from the fields and the filter.
func (c *core) sign(k *key) {
	k.simple = k.exact && !k.empty
	box := k.box()
	for i := range box {
		s := &box[i]
		eqSpan := s.hasEq && math.IsInf(s.lo, -1) && math.IsInf(s.hi, 1)
		k.simple = k.simple && !s.hasPrefix
		switch {
		case s.hasEq && k.eqAttr == 0:
			k.eqAttr, k.eqHash = c.attrID(s.attr), strHash(s.str)
			k.simple = k.simple && eqSpan
		case !s.hasEq && k.numAttr == 0:
			k.numAttr, k.lo, k.hi = c.attrID(s.attr), s.lo, s.hi
		default:
			k.simple = false
		}
	}
	if k.simple {
		k.setBox(nil)
	}
}

// attrID interns an attribute name (ids start at 1).
func (c *core) attrID(attr string) int32 {
	id, ok := c.attrIDs[attr]
	if !ok {
		if c.attrIDs == nil {
			c.attrIDs = make(map[string]int32)
		}
		id = int32(len(c.attrIDs) + 1)
		c.attrIDs[attr] = id
	}
	return id
}

// Add inserts subscription id with filter f, received from interface from.
// It fails, changing nothing, when the id is present already. A filter that
// can match no event (match.Satisfiable is false) is kept aside: it never
// matches and is never part of the structure.
func (c *core) Add(id match.ID, from Iface, f match.Filter) error {
	_, err := c.add(id, from, f)
	return err
}

// add is Add returning the node that now holds the subscription (nil when
// it was kept aside).
func (c *core) add(id match.ID, from Iface, f match.Filter) (*node, error) {
	return c.addText(id, from, f, f.String())
}

// addText is add with f's canonical text given (f.String()): a new node
// keeps that string, so a caller that keys its own map by the text can
// share one copy with the node (Table.Subscribe).
func (c *core) addText(id match.ID, from Iface, f match.Filter, text string) (*node, error) {
	if c.has(id) {
		return nil, fmt.Errorf("%s: subscription %d already present", c.name, id)
	}
	before := c.tests
	defer func() { c.ctr.Inserts++; c.ctr.InsertTests += c.tests - before }()
	e := entry{id: id, from: from}
	c.subs++
	if !match.Satisfiable(f) {
		c.void[id] = voided{e, f}
		return nil, nil
	}
	n := c.byText.get(text)
	if n == nil {
		u := c.newNode(f, text)
		if n = c.alg.place(c, u); n == nil {
			n = u
			c.register(u)
		}
	}
	c.bindText(e, f, text, n)
	return n, nil
}

// bindText adds subscription e, of filter f whose canonical text is text,
// to node n's entries, and records it in byID and others as they need.
func (c *core) bindText(e entry, f match.Filter, text string, n *node) {
	n.addSub(e)
	if !c.textIDs || text != n.text {
		c.byID[e.id] = n
	}
	if !f.Equal(n.key.f) {
		c.others[e.id] = f
	}
}

// bind is bindText for subscription e of filter f.
func (c *core) bind(e entry, f match.Filter, n *node) {
	text := n.text
	if !f.Equal(n.key.f) {
		text = f.String()
	}
	c.bindText(e, f, text, n)
}

// entryFilter returns the filter of subscription e of node n.
func (c *core) entryFilter(n *node, e entry) match.Filter {
	if f, ok := c.others[e.id]; ok {
		return f
	}
	return n.key.f
}

// ownEntry returns the id of interface from's subscription to node n of
// n's own canonical text, if n holds one (in a core a Table owns: see
// byID).
func (c *core) ownEntry(n *node, from Iface) (match.ID, bool) {
	for e := range n.subs {
		if e.from != from {
			continue
		}
		if _, other := c.byID[e.id]; !other {
			return e.id, true
		}
	}
	return 0, false
}

// nodeOf returns the node holding subscription id, whose filter's
// canonical text is text (the core need not know it when it does not
// share byID with a Table), or nil when it holds none.
func (c *core) nodeOf(id match.ID, text string) *node {
	if n, ok := c.byID[id]; ok || !c.textIDs {
		return n
	}
	if n := c.byText.get(text); n != nil && n.holds(id) {
		return n
	}
	return nil
}

// register records a node just linked into the structure. It takes the
// place in byText of a node of the same text, if any (an RTO placement a
// client answered wrongly may make a second node of one text).
func (c *core) register(u *node) {
	if n := c.byText.get(u.text); n != nil {
		c.byText.remove(n)
	}
	c.byText.add(u)
	c.nodes++
	if c.all.indexing {
		c.all.add(u)
	}
	c.gen++
}

func (c *core) has(id match.ID) bool {
	_, ok := c.byID[id]
	_, void := c.void[id]
	return ok || void
}

// Insert adds a subscription from interface 0; it implements match.Index.
func (c *core) Insert(id match.ID, f match.Filter) error { return c.Add(id, 0, f) }

// Delete removes a subscription. It fails, changing nothing, when the id is
// unknown. A node left without subscriptions leaves the structure.
func (c *core) Delete(id match.ID) error {
	_, _, _, err := c.remove(id, "")
	return err
}

// remove is Delete of subscription id, whose filter's canonical text is
// text (see nodeOf), returning the node that held the subscription (nil
// when kept aside), whether that node left the structure, and then the
// nodes whose ancestors changed.
func (c *core) remove(id match.ID, text string) (n *node, gone bool, starts []*node, err error) {
	if _, ok := c.void[id]; ok {
		delete(c.void, id)
		c.subs--
		c.ctr.Deletes++
		return nil, false, nil, nil
	}
	n = c.nodeOf(id, text)
	if n == nil {
		return nil, false, nil, fmt.Errorf("%s: subscription %d not present", c.name, id)
	}
	before := c.tests
	defer func() { c.ctr.Deletes++; c.ctr.DeleteTests += c.tests - before }()
	delete(c.byID, id)
	delete(c.others, id)
	c.subs--
	n.removeSub(id)
	if n.nsubs() > 0 || n.pinned {
		return n, false, nil, nil
	}
	starts = c.alg.unlink(c, n)
	c.byText.remove(n)
	c.nodes--
	if c.all.indexing {
		c.all.remove(n)
	}
	c.gen++
	return n, true, starts, nil
}

// Len returns the number of subscriptions, including those kept aside.
func (c *core) Len() int { return c.subs }

// Nodes returns the number of nodes (distinct filter classes, and fixed
// filters) in the structure.
func (c *core) Nodes() int { return c.nodes }

// Match appends the ids of the subscriptions whose filter matches e. It
// walks from the roots and descends only below matching nodes.
func (c *core) Match(e match.Event, dst []match.ID) []match.ID {
	c.walkMatching(e, func(n *node) {
		for en := range n.subs {
			dst = append(dst, en.id)
		}
	})
	return dst
}

// MatchInterfaces appends the distinct interfaces that hold a subscription
// matching e, ascending.
func (c *core) MatchInterfaces(e match.Event, dst []Iface) []Iface {
	start := len(dst)
	c.walkMatching(e, func(n *node) {
		for en := range n.subs {
			if !slices.Contains(dst[start:], en.from) {
				dst = append(dst, en.from)
			}
		}
	})
	slices.Sort(dst[start:])
	return dst
}

// walkMatching calls fn on every node whose filter matches e, each once.
func (c *core) walkMatching(e match.Event, fn func(*node)) {
	c.ctr.Matches++
	c.newEpoch()
	queue := c.buf[:0]
	queue = append(queue, c.roots.members()...)
	for i := 0; i < len(queue); i++ {
		n := queue[i]
		if c.touch(n).visited {
			continue
		}
		n.visited = true
		c.ctr.MatchEvals++
		if !n.key.f.Matches(e) {
			continue
		}
		fn(n)
		queue = append(queue, n.children()...)
	}
	clear(queue)
	c.buf = queue[:0]
}

// filterOf returns the filter subscription id (of canonical text text,
// see nodeOf) was made with (the subscription is present).
func (c *core) filterOf(id match.ID, text string) match.Filter {
	if e, ok := c.void[id]; ok {
		return e.f
	}
	n := c.nodeOf(id, text)
	for e := range n.subs {
		if e.id == id {
			return c.entryFilter(n, e)
		}
	}
	panic(fmt.Sprintf("%s: subscription %d has no entry in its node", c.name, id))
}
