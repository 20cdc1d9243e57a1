package poset

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/sift-pubsub/sift/match"
)

// RTOConfig configures routing-table offloading. The zero value sends
// vectors of 64 filters to one client under Trust.
type RTOConfig struct {
	// VectorSize is the number of filters per vector; zero means 64.
	VectorSize int
	// Policy is how answers are used; see Policy.
	Policy Policy
	// Clients is how many clients evaluate each vector under Majority
	// (zero means 3); Trust and Verify ask one.
	Clients int
}

func (cfg RTOConfig) withDefaults() (RTOConfig, error) {
	if cfg.VectorSize == 0 {
		cfg.VectorSize = 64
	}
	if cfg.Clients == 0 {
		cfg.Clients = 3
	}
	if cfg.Policy != Majority {
		cfg.Clients = 1
	}
	if cfg.VectorSize < 0 || cfg.Clients < 0 || cfg.Policy > Verify {
		return cfg, fmt.Errorf("rto: invalid config %+v", cfg)
	}
	return cfg, nil
}

// Query is one filter vector of the layered view of the routing table,
// sent with the filter to insert. Layer 0 holds roots; layer i+1 children
// of layer i nodes that the answers so far leave relevant. Filters may
// share the router's memory: receivers must not modify it.
type Query struct {
	Layer   int
	Filter  match.Filter   // the filter being inserted
	Filters []match.Filter // the vector
	size    int
}

// Size is the query's size in bytes on the wire: the canonical text of
// every filter with a 2-byte length, and an 8-byte header.
func (q Query) Size() int { return q.size }

// Answer is a client's return vector for a query: Up marks the filters
// that cover the query's filter, Down those it covers, and Overlap those
// that may match a common event with it (match.Overlaps). The poset's
// placement descends only below overlapping filters: below a disjoint one
// no filter can be covered by the new one.
type Answer struct {
	Up, Down, Overlap Bits
}

// Size is the answer's size in bytes on the wire.
func (a Answer) Size() int { return 8 * (len(a.Up) + len(a.Down) + len(a.Overlap)) }

// Evaluate is the honest client's side of RTO: it computes the return
// vector of a query with the structures' relation, Covers.
func Evaluate(q Query) Answer {
	k := newKey(q.Filter)
	n := len(q.Filters)
	a := Answer{Up: NewBits(n), Down: NewBits(n), Overlap: NewBits(n)}
	for i, f := range q.Filters {
		kf := newKey(f)
		if relates(&kf, &k) {
			a.Up.Set(i)
		}
		if relates(&k, &kf) {
			a.Down.Set(i)
		}
		if match.Overlaps(f, q.Filter) {
			a.Overlap.Set(i)
		}
	}
	return a
}

// RTOStats describes one offloaded insertion.
type RTOStats struct {
	Rounds   int  // layers queried
	Vectors  int  // vectors sent (each to Clients clients)
	BytesOut int  // query bytes sent, all clients
	BytesIn  int  // answer bytes received, all clients
	Disputed bool // clients disagreed (Majority)
	Verified bool // the position was checked with covering tests
	Fallback bool // the router inserted the filter itself
	// Touched counts the nodes the router looked at beyond the roots:
	// children examined for the next layer (sent or left out as
	// disjoint). It is the placement's memory work, load-independent.
	Touched int
}

// Placement is the router's state machine for one offloaded insertion:
// Queries gives the vectors of the current layer, Answer takes the clients'
// return vectors and either moves to the next layer or places the filter.
// The structure must not change while a placement is in progress, and one
// placement runs at a time per structure: Answer fails if the structure
// changed or a newer placement started. A placement does no I/O and keeps
// no clock.
type Placement struct {
	c       *core
	cfg     RTOConfig
	e       entry
	u       *node
	gen     uint64
	tok     uint64 // marks the nodes this placement sent
	forest  bool
	parent  *node // forest: the node being descended
	queries []Query
	vectors [][]*node
	ups     []*node // nodes answered as covering the filter
	downs   []*node // nodes answered as covered by it
	next    []*node // poset: the next layer, gathered while reading answers
	firstUp *node   // forest: the first covering node of the current layer
	// poset: the overlapping, not covered roots; and whether exploration is
	// restricted to the subtrees of covering roots
	expandable []*node
	restricted bool
	layer      int
	done       bool
	stats      RTOStats
}

// Answer bits kept on nodes (node.rtoAns) during a placement.
const (
	bitUp      = 1
	bitDown    = 2
	bitSent    = 4
	bitOverlap = 8
)

// errStale reports a structure that changed during a placement.
var errStale = errors.New("rto: the structure changed during the placement; start again")

// StartRTO begins an offloaded insertion of subscription id (filter f from
// interface from). When no client work is needed (the filter is present
// already, or unsatisfiable, or the structure is empty) the subscription is
// added at once and the placement is done.
func (c *core) StartRTO(id match.ID, from Iface, f match.Filter, cfg RTOConfig) (*Placement, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if c.has(id) {
		return nil, fmt.Errorf("rto: subscription %d already present", id)
	}
	c.rtoTok++
	_, forest := c.alg.(forestAlg)
	p := &Placement{c: c, cfg: cfg, e: entry{id: id, from: from, f: f}, gen: c.gen, tok: c.rtoTok, forest: forest}
	if !match.Satisfiable(f) || c.byText[f.String()] != nil || c.roots.len() == 0 {
		p.done = true
		return p, c.Add(id, from, f)
	}
	p.u = c.newNode(f, f.String())
	p.prepare(c.roots.list)
	return p, nil
}

// Done reports whether the filter has been placed.
func (p *Placement) Done() bool { return p.done }

// Stats returns what the placement cost so far.
func (p *Placement) Stats() RTOStats { return p.stats }

// Clients returns how many clients must answer each query.
func (p *Placement) Clients() int { return p.cfg.Clients }

// Queries returns the vectors of the current layer; each must be answered
// by Clients() clients.
func (p *Placement) Queries() []Query { return p.queries }

// prepare splits the next layer into vectors. The roots' filters come
// from the root set's cache, so layer 0 costs no visit to its nodes.
func (p *Placement) prepare(layer []*node) {
	var filters []match.Filter
	var lens []int32
	if p.layer == 0 {
		filters, lens = p.c.roots.filters, p.c.roots.textLen
	} else {
		filters, lens = make([]match.Filter, len(layer)), make([]int32, len(layer))
		for i, n := range layer {
			filters[i], lens[i] = n.key.f, int32(len(n.text))
		}
	}
	p.queries, p.vectors = p.queries[:0], p.vectors[:0]
	for start := 0; start < len(layer); start += p.cfg.VectorSize {
		end := min(start+p.cfg.VectorSize, len(layer))
		q := Query{Layer: p.layer, Filter: p.u.key.f, Filters: filters[start:end:end], size: 8 + len(p.u.text)}
		for _, l := range lens[start:end] {
			q.size += 2 + int(l)
		}
		p.queries = append(p.queries, q)
		p.vectors = append(p.vectors, layer[start:end])
		p.stats.BytesOut += q.size * p.cfg.Clients
	}
	p.stats.Rounds++
	p.stats.Vectors += len(p.queries)
}

// Answer takes, for each query of the current layer in order, the answers
// of Clients() clients. Malformed answers are an error and change nothing.
// It then moves to the next layer, or places the filter and reports done.
func (p *Placement) Answer(answers [][]Answer) (done bool, err error) {
	if p.done {
		return true, errors.New("rto: placement already done")
	}
	if p.c.gen != p.gen || p.c.rtoTok != p.tok {
		return false, errStale
	}
	if err := p.checkShape(answers); err != nil {
		return false, err
	}
	for qi, nodes := range p.vectors {
		k := len(answers[qi])
		ups, downs, overlaps := make([]Bits, k), make([]Bits, k), make([]Bits, k)
		for ci, a := range answers[qi] {
			ups[ci], downs[ci], overlaps[ci] = a.Up, a.Down, a.Overlap
			p.stats.BytesIn += a.Size()
		}
		up, d1 := combine(ups, len(nodes))
		down, d2 := combine(downs, len(nodes))
		over, d3 := combine(overlaps, len(nodes))
		p.stats.Disputed = p.stats.Disputed || d1 || d2 || d3
		// Only nodes with some bit set need a visit.
		for w := range up {
			for set := up[w] | down[w] | over[w]; set != 0; set &= set - 1 {
				i := w*64 + bits.TrailingZeros64(set)
				v := uint8(bitSent)
				if up.Get(i) {
					v |= bitUp
				}
				if down.Get(i) {
					v |= bitDown
				}
				if over.Get(i) {
					v |= bitOverlap
				}
				n := nodes[i]
				n.rtoTok, n.rtoAns = p.tok, v
				p.note(n, v)
			}
		}
	}
	p.layer++
	next, finished := p.advance()
	if finished {
		p.finish()
		return true, nil
	}
	p.prepare(next)
	return false, nil
}

// note records a node's answer: the lists the position is computed from,
// and (poset) its children for the next layer when the filter overlaps it
// without covering it.
func (p *Placement) note(n *node, v uint8) {
	if v&bitUp != 0 {
		p.ups = append(p.ups, n)
		if p.firstUp == nil {
			p.firstUp = n
		}
	}
	if v&bitDown != 0 {
		p.downs = append(p.downs, n)
	}
	if p.forest || v&bitDown != 0 || v&bitOverlap == 0 {
		return
	}
	if p.layer == 0 {
		p.expandable = append(p.expandable, n) // decided once layer 0 is read
		return
	}
	p.expand(n)
}

// expand queues n's children not sent yet for the next layer, leaving
// out those disjoint from the filter: they can be neither above nor below
// it. A node with many children skips, through its child index, whole
// buckets of children that require another value of the filter's first
// string equality, without looking at them.
func (p *Placement) expand(n *node) {
	if n.kids != nil {
		n.kids.each(p.u.key.eqAttr, p.u.key.eqHash, p.expandChild)
		return
	}
	for _, ch := range n.children {
		p.expandChild(ch)
	}
}

// childUp reports whether a child of n was answered as covering the
// filter. A covering child is not disjoint from it, so only the child
// index's relevant buckets need a look.
func (p *Placement) childUp(n *node) bool {
	if n.kids == nil {
		return anyChild(n, func(ch *node) bool { return p.is(ch, bitUp) })
	}
	up := false
	n.kids.each(p.u.key.eqAttr, p.u.key.eqHash, func(ch *node) { up = up || p.is(ch, bitUp) })
	return up
}

// expandChild queues ch unless it was looked at already or is disjoint
// from the filter (marked unsent, so it is looked at once).
func (p *Placement) expandChild(ch *node) {
	if ch.rtoTok == p.tok {
		return
	}
	p.stats.Touched++
	ch.rtoTok, ch.rtoAns = p.tok, 0
	if !disjoint(&ch.key, &p.u.key) {
		ch.rtoAns = bitSent // queued; answered next round
		p.next = append(p.next, ch)
	}
}

func (p *Placement) checkShape(answers [][]Answer) error {
	if len(answers) != len(p.queries) {
		return fmt.Errorf("rto: %d answer sets for %d queries", len(answers), len(p.queries))
	}
	for qi, as := range answers {
		if len(as) != p.cfg.Clients {
			return fmt.Errorf("rto: query %d: %d answers, want %d", qi, len(as), p.cfg.Clients)
		}
		want := len(NewBits(len(p.vectors[qi])))
		for _, a := range as {
			if len(a.Up) != want || len(a.Down) != want || len(a.Overlap) != want {
				return fmt.Errorf("rto: query %d: answer of the wrong length", qi)
			}
		}
	}
	return nil
}

// is reports whether the answer for n has the bit. Nodes are marked only
// when queued below layer 0 or when an answer sets a bit for them.
func (p *Placement) is(n *node, bit uint8) bool {
	return n.rtoTok == p.tok && n.rtoAns&bit != 0
}

// sent reports whether n was sent: every root is (layer 0), other nodes
// are marked when queued.
func (p *Placement) sent(n *node) bool {
	return n.isRoot() || p.is(n, bitSent)
}
