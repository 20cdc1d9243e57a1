package poset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
// of layer i nodes that the answers so far leave relevant. Filters and
// Texts share the router's memory: receivers must not modify them, and
// they are valid until the placement's next Answer (or the next StartRTO
// on the structure).
type Query struct {
	Layer  int
	Filter match.Filter // the filter being inserted
	// Text is Filter's canonical text, for the wire.
	Text string
	// Filters is the vector, and Texts their canonical texts (the wire
	// form), made once per node so a router encodes a query without
	// formatting filters.
	Filters []match.Filter
	Texts   []string
	size    int
}

// Size is the query's size in bytes on the wire: the canonical text of
// every filter with a 2-byte length, and an 8-byte header.
func (q Query) Size() int { return q.size }

// AppendWire appends the query in a simple wire form to dst: the filter's
// and then each vector filter's canonical text, each after a 2-byte
// big-endian length (texts are truncated at 65,535 bytes), after an
// 8-byte header holding the layer and the vector length. It is what Size
// counts, and what a router does per query beyond building it.
func (q Query) AppendWire(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(q.Layer))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(q.Texts)))
	dst = appendText(dst, q.Text)
	for _, t := range q.Texts {
		dst = appendText(dst, t)
	}
	return dst
}

func appendText(dst []byte, t string) []byte {
	t = t[:min(len(t), math.MaxUint16)]
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(t)))
	return append(dst, t...)
}

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
	c      *core
	cfg    RTOConfig
	e      entry
	u      *node
	gen    uint64
	tok    uint64 // marks the nodes this placement looked at
	forest bool
	parent *node // forest: the node being descended
	layer  int
	done   bool
	stats  RTOStats
	*rtoScratch
}

// rtoScratch is the memory of a placement, handed back to the structure
// when the placement finishes and on to the next one, so that placements
// allocate little.
type rtoScratch struct {
	queries []Query
	vectors [][]*node
	cur     []*node        // the nodes of the current layer (below layer 0)
	next    []*node        // the next layer, gathered while reading answers
	filters []match.Filter // the current layer's filters and texts
	texts   []string
	ups     []*node // nodes answered as covering the filter
	downs   []*node // nodes answered as covered by it
	todo    []*node // poset: answered nodes that joined the region
	buckets [][]*node
	stack   []*node
	votes   [3][]Bits
	firstUp *node // forest: the first covering node of the current layer
	// poset: the overlapping, uncovered roots, expanded only when no root
	// covers the filter (then everything overlapping is explored: all)
	expandable []*node
	all        bool
	// poset: the region below the first predecessor found, where the
	// successors are searched; checked tells how many of ups were
	// checked for being a predecessor
	region  bool
	checked int
}

func (s *rtoScratch) reset() {
	for _, l := range [][]*node{s.cur, s.next, s.ups, s.downs, s.todo, s.stack, s.expandable} {
		clear(l)
	}
	clear(s.vectors)
	clear(s.buckets)
	*s = rtoScratch{
		queries: s.queries[:0], vectors: s.vectors[:0], cur: s.cur[:0], next: s.next[:0],
		filters: s.filters[:0], texts: s.texts[:0], ups: s.ups[:0], downs: s.downs[:0],
		todo: s.todo[:0], buckets: s.buckets[:0], stack: s.stack[:0], votes: s.votes,
		expandable: s.expandable[:0],
	}
}

// Answer bits kept on nodes (node.rtoAns) during a placement.
const (
	bitUp       = 1
	bitDown     = 2
	bitSent     = 4  // queued for a layer (every root is sent too)
	bitOverlap  = 8  //
	bitRegion   = 16 // poset: in the successor search's region
	bitExpanded = 32 // poset: children queued
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
	if !match.Satisfiable(f) || c.roots.len() == 0 {
		p.done = true
		return p, c.Add(id, from, f)
	}
	text := f.String()
	if c.byText[text] != nil {
		p.done = true
		return p, c.Add(id, from, f)
	}
	// The memory of the last placement that finished, if no placement
	// holds it: a placement left unfinished (stale) keeps its own.
	p.rtoScratch, c.rtoMem = c.rtoMem, nil
	if p.rtoScratch == nil {
		p.rtoScratch = &rtoScratch{}
	}
	p.reset()
	p.u = c.newNode(f, text)
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
// by Clients() clients. They are valid until the next Answer.
func (p *Placement) Queries() []Query {
	if p.done {
		return nil
	}
	return p.queries
}

// prepare splits the next layer into vectors. The roots' filters and
// texts come from the root set's cache, so layer 0 costs no visit to its
// nodes.
func (p *Placement) prepare(layer []*node) {
	filters, texts := p.c.roots.filters, p.c.roots.texts
	if p.layer > 0 {
		p.filters, p.texts = p.filters[:0], p.texts[:0]
		for _, n := range layer {
			p.filters = append(p.filters, n.key.f)
			p.texts = append(p.texts, n.text)
		}
		filters, texts = p.filters, p.texts
	}
	p.queries, p.vectors = p.queries[:0], p.vectors[:0]
	for start := 0; start < len(layer); start += p.cfg.VectorSize {
		end := min(start+p.cfg.VectorSize, len(layer))
		q := Query{Layer: p.layer, Filter: p.u.key.f, Text: p.u.text,
			Filters: filters[start:end:end], Texts: texts[start:end:end], size: 8 + 2 + len(p.u.text)}
		for _, t := range q.Texts {
			q.size += 2 + len(t)
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
	asked := len(p.ups)
	for qi, nodes := range p.vectors {
		up, down, over := p.combine(answers[qi], len(nodes))
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
				if n.rtoTok == p.tok {
					v |= n.rtoAns & bitRegion
				}
				n.rtoTok, n.rtoAns = p.tok, v
				p.note(n, v)
			}
		}
	}
	p.layer++
	next, finished := p.advance(asked)
	if finished {
		p.finish()
		return true, nil
	}
	p.prepare(next)
	return false, nil
}

// combine merges the answers of the clients to one query: their bitwise
// majority, recording a dispute. One client's answer is used as it is.
func (p *Placement) combine(as []Answer, n int) (up, down, over Bits) {
	if len(as) == 1 {
		p.stats.BytesIn += as[0].Size()
		return as[0].Up, as[0].Down, as[0].Overlap
	}
	for i := range p.votes {
		p.votes[i] = p.votes[i][:0]
	}
	for _, a := range as {
		p.stats.BytesIn += a.Size()
		p.votes[0] = append(p.votes[0], a.Up)
		p.votes[1] = append(p.votes[1], a.Down)
		p.votes[2] = append(p.votes[2], a.Overlap)
	}
	up, d1 := combine(p.votes[0], n)
	down, d2 := combine(p.votes[1], n)
	over, d3 := combine(p.votes[2], n)
	p.stats.Disputed = p.stats.Disputed || d1 || d2 || d3
	return up, down, over
}

// note records a node's answer: the lists the position is computed from,
// and (poset) the expansions it calls for. Every node answered as covering
// the filter has its children sent (the search for predecessors), and so
// has every overlapping node that it does not cover in the successor
// search's region; at layer 0 the overlapping roots wait for advance.
func (p *Placement) note(n *node, v uint8) {
	if v&bitUp != 0 {
		p.ups = append(p.ups, n)
		if p.firstUp == nil {
			p.firstUp = n
		}
		if !p.forest {
			for _, q := range n.parents {
				q.rtoKid = p.tok
			}
		}
	}
	if v&bitDown != 0 {
		p.downs = append(p.downs, n)
	}
	switch {
	case p.forest || v&bitDown != 0:
	case v&bitUp != 0:
		p.expand(n, false)
	case v&bitOverlap == 0:
	case p.layer == 0:
		p.expandable = append(p.expandable, n)
	case p.all || v&bitRegion != 0:
		p.expand(n, p.region)
	}
}

// expand queues n's children not looked at yet for the next layer,
// leaving out those disjoint from the filter: they can be neither above
// nor below it. A node with many children skips, through its child index,
// whole buckets of children that require another value of the filter's
// first string equality, without looking at them. With region, the
// children join the successor search's region.
func (p *Placement) expand(n *node, region bool) {
	n.rtoAns |= bitExpanded
	if n.kids == nil {
		for _, ch := range n.children {
			p.expandChild(ch, region)
		}
		return
	}
	p.buckets = n.kids.overlapping(p.u.key.eqAttr, p.u.key.eqHash, p.buckets[:0])
	for _, b := range p.buckets {
		for _, ch := range b {
			p.expandChild(ch, region)
		}
	}
}

// expandChild queues ch unless it was looked at already or is disjoint
// from the filter (marked unsent, so it is looked at once). A child seen
// already that joins the region is expanded in turn if its answer calls
// for it.
func (p *Placement) expandChild(ch *node, region bool) {
	if ch.rtoTok == p.tok {
		if region && ch.rtoAns&bitRegion == 0 {
			ch.rtoAns |= bitRegion
			if ch.rtoAns&(bitUp|bitDown|bitOverlap|bitExpanded) == bitOverlap {
				p.todo = append(p.todo, ch)
			}
		}
		return
	}
	p.stats.Touched++
	ch.rtoTok, ch.rtoAns = p.tok, 0
	if !disjoint(&ch.key, &p.u.key) {
		ch.rtoAns = bitSent // queued; answered next round
		if region {
			ch.rtoAns |= bitRegion
		}
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
