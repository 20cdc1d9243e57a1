package poset

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/sift-pubsub/sift/match"
)

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
	f      match.Filter // the subscription's filter
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
	ups     []*node   // nodes answered as covering the filter
	downs   []*node   // nodes answered as covered by it
	todo    []*node   // poset: answered nodes that joined the region
	buckets [][]*node // runs of a child index being walked
	stack   []*node   // belowDown's walk
	votes   [3][]Bits // majority: the clients' Up, Down, Overlap for one query
	firstUp *node     // forest: the first covering node of the current layer
	// poset: the overlapping, uncovered roots, expanded only when no root
	// covers the filter (then everything overlapping is explored: all)
	expandable []*node
	all        bool
	// poset: the region below the first predecessor found, where the
	// successors are searched; checked tells how many of ups were
	// checked for being a predecessor
	region  bool
	checked int
	// the answer bits of the nodes this placement looked at (on the
	// placement, not the node: few nodes are ever mid-placement)
	marks map[*node]rtoMark
}

// rtoMark is what a placement keeps of a node it looked at: the answer
// bits, whether they were set for this placement (marked; ans may hold
// bits set by expand before), and whether a child was answered as
// covering the filter (kid).
type rtoMark struct {
	ans         uint8
	marked, kid bool
}

// mark returns n's mark (the zero mark if none).
func (p *Placement) mark(n *node) rtoMark { return p.marks[n] }

// setAns marks n with the answer bits v.
func (p *Placement) setAns(n *node, v uint8) {
	m := p.marks[n]
	m.ans, m.marked = v, true
	p.marks[n] = m
}

// orAns adds bit to n's answer bits, marking nothing.
func (p *Placement) orAns(n *node, bit uint8) {
	m := p.marks[n]
	m.ans |= bit
	p.marks[n] = m
}

// setKid records that a child of n was answered as covering the filter.
func (p *Placement) setKid(n *node) {
	m := p.marks[n]
	m.kid = true
	p.marks[n] = m
}

// reset empties the scratch, keeping its memory but no pointer to a node
// or filter: a finished placement's scratch waits in the structure for the
// next one, and the nodes it looked at may be deleted meanwhile. Every
// slice is kept zero beyond its length (emptied, and stacks clear what
// they pop), so clearing up to the lengths is enough: clearing up to the
// capacities, which grow to the largest placement seen, cost about a
// tenth of a placement in cold memory.
func (s *rtoScratch) reset() {
	for _, l := range [][]*node{s.cur, s.next, s.ups, s.downs, s.todo, s.stack, s.expandable} {
		clear(l)
	}
	clear(s.vectors)
	clear(s.buckets)
	clear(s.queries)
	clear(s.filters)
	clear(s.texts)
	clear(s.marks)
	*s = rtoScratch{marks: s.marks,
		queries: s.queries[:0], vectors: s.vectors[:0], cur: s.cur[:0], next: s.next[:0],
		filters: s.filters[:0], texts: s.texts[:0], ups: s.ups[:0], downs: s.downs[:0],
		todo: s.todo[:0], buckets: s.buckets[:0], stack: s.stack[:0], votes: s.votes,
		expandable: s.expandable[:0],
	}
}

// emptied clears s and returns it empty, keeping its memory: the
// scratch's slices stay zero beyond their length (see reset).
func emptied[T any](s []T) []T {
	clear(s)
	return s[:0]
}

// Answer bits kept for the nodes a placement looks at (Placement.marks).
const (
	bitUp       = 1
	bitDown     = 2
	bitSent     = 4  // queued for a layer (every root is sent too)
	bitOverlap  = 8  // may match a common event with the filter
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
	if _, shallow := c.alg.(shallowAlg); shallow {
		return nil, errors.New("rto: the shallow forest takes no assisted placements (use poset or forest)")
	}
	c.rtoTok++
	_, forest := c.alg.(forestAlg)
	p := &Placement{c: c, cfg: cfg, e: entry{id: id, from: from}, f: f, gen: c.gen, tok: c.rtoTok, forest: forest}
	if !match.Satisfiable(f) || c.roots.len() == 0 {
		p.done = true
		return p, c.Add(id, from, f)
	}
	text := f.String()
	if c.byText.get(text) != nil {
		p.done = true
		return p, c.Add(id, from, f)
	}
	// The memory of the last placement that finished, if no placement
	// holds it: a placement left unfinished (stale) keeps its own.
	p.rtoScratch, c.rtoMem = c.rtoMem, nil
	if p.rtoScratch == nil {
		p.rtoScratch = &rtoScratch{marks: make(map[*node]rtoMark)}
	}
	p.u = c.newNode(f, text) // (the scratch was reset when handed back)
	p.prepare(c.roots.members())
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
	filters, texts := p.c.roots.cache()
	if p.layer > 0 {
		p.filters, p.texts = emptied(p.filters), emptied(p.texts)
		for _, n := range layer {
			p.filters = append(p.filters, n.key.f)
			p.texts = append(p.texts, n.text)
		}
		filters, texts = p.filters, p.texts
	}
	p.queries, p.vectors = emptied(p.queries), emptied(p.vectors)
	for start := 0; start < len(layer); start += p.cfg.VectorSize {
		end := min(start+p.cfg.VectorSize, len(layer))
		q := Query{Layer: p.layer, Filter: p.u.key.f, Text: p.u.text,
			Filters: filters[start:end:end], Texts: texts[start:end:end], size: 8 + wireLen(p.u.text)}
		for _, t := range q.Texts {
			q.size += wireLen(t)
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
				if m := p.mark(n); m.marked {
					v |= m.ans & bitRegion
				}
				p.setAns(n, v)
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

func (p *Placement) checkShape(answers [][]Answer) error {
	if len(answers) != len(p.queries) {
		return fmt.Errorf("rto: %d answer sets for %d queries", len(answers), len(p.queries))
	}
	for qi, as := range answers {
		if len(as) != p.cfg.Clients {
			return fmt.Errorf("rto: query %d: %d answers, want %d", qi, len(as), p.cfg.Clients)
		}
		n := len(p.vectors[qi])
		want := len(NewBits(n))
		for _, a := range as {
			if len(a.Up) != want || len(a.Down) != want || len(a.Overlap) != want {
				return fmt.Errorf("rto: query %d: answer of the wrong length", qi)
			}
			if a.Up.beyond(n) || a.Down.beyond(n) || a.Overlap.beyond(n) {
				return fmt.Errorf("rto: query %d: answer marks a filter beyond the %d of the vector", qi, n)
			}
		}
	}
	return nil
}

// is reports whether the answer for n has the bit. Nodes are marked only
// when queued below layer 0 or when an answer sets a bit for them.
func (p *Placement) is(n *node, bit uint8) bool {
	m := p.mark(n)
	return m.marked && m.ans&bit != 0
}

// sent reports whether n was sent: every root is (layer 0), other nodes
// are marked when queued.
func (p *Placement) sent(n *node) bool {
	return n.isRoot() || p.is(n, bitSent)
}
