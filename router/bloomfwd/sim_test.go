package bloomfwd

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/match/bloom/bloomtest"
	"github.com/sift-pubsub/sift/router/mesh"
)

// simRouter is one router of the simulation, driven the way the router's
// matching loop drives router/mesh and this package.
type simRouter struct {
	name  string
	mesh  *mesh.Mesh
	dict  *Dict
	trees *Trees
	peer  map[mesh.Link]*simLink // link id here -> the session
	subs  map[uint64]match.Filter
}

// simLink is one session of a link between routers a and b, with a FIFO
// queue of encoded frames each way.
type simLink struct {
	a, b   *simRouter
	ida    mesh.Link // the session's id at a
	idb    mesh.Link // at b
	toA    [][]byte
	toB    [][]byte
	closed bool
}

// sim is a mesh of simRouters over lossless FIFO links, with a seeded
// scheduler. dictLast reverses the order the package doc requires (mesh
// messages before dictionary ones), to show the check can fail.
type sim struct {
	t        testing.TB
	rng      *rand.Rand
	p        bloom.Params
	routers  []*simRouter
	edges    [][2]int // the tree the links may form
	links    []*simLink
	dictLast bool
	nextRef  uint64
	epoch    int            // bumped by every link change
	madeAt   map[uint64]int // subscription ref -> epoch when made
	owner    map[uint64]int // ref -> router index
	filters  map[uint64]match.Filter
	ready    map[uint64]bool
	checked  int // Ready subscriptions whose terms were checked
	failures []string
}

func newSim(t testing.TB, seed uint64, n int, cfg Config) *sim {
	s := &sim{t: t, rng: rand.New(rand.NewPCG(seed, 7)), p: cfg.Params.Resolved(),
		madeAt: map[uint64]int{}, owner: map[uint64]int{}, filters: map[uint64]match.Filter{}, ready: map[uint64]bool{}}
	for i := range n {
		m, err := mesh.New(mesh.Config{Name: fmt.Sprintf("r%d", i), MaxLinks: 4})
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewDict(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrees(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.routers = append(s.routers, &simRouter{name: m.Name(), mesh: m, dict: d, trees: tr, peer: map[mesh.Link]*simLink{}, subs: map[uint64]match.Filter{}})
		if i > 0 {
			s.edges = append(s.edges, [2]int{s.rng.IntN(i), i})
		}
	}
	return s
}

// send queues a router's outputs: dictionary messages first (unless
// dictLast), as the router does.
func (s *sim) send(r *simRouter, dict []mesh.Send, out mesh.Output) {
	sends := append(slices.Clone(dict), out.Sends...)
	if s.dictLast {
		sends = append(slices.Clone(out.Sends), dict...)
	}
	for _, sd := range sends {
		l := r.peer[sd.Link]
		if l == nil {
			continue
		}
		frame := wire.AppendFrame(nil, sd.Msg)
		if l.a == r {
			l.toB = append(l.toB, frame)
		} else {
			l.toA = append(l.toA, frame)
		}
	}
	for _, rd := range out.Ready {
		s.checkReady(rd.Ref)
	}
	for _, c := range out.Close {
		s.t.Fatalf("%s closes link %d: %s", r.name, c.Link, c.Reason)
	}
}

// checkReady: a subscription made with the topology unchanged since is
// Ready only when its terms are at every router of its component.
func (s *sim) checkReady(ref uint64) {
	s.ready[ref] = true
	if s.madeAt[ref] != s.epoch {
		return
	}
	s.checked++
	for _, r := range s.component(s.owner[ref]) {
		for _, term := range s.p.Terms(s.filters[ref]) {
			if !r.dict.Has(term) {
				s.failures = append(s.failures, fmt.Sprintf("subscription %d (%s) at %s is Ready but %s lacks term %s",
					ref, s.filters[ref], s.routers[s.owner[ref]].name, r.name, term))
			}
		}
	}
}

// component returns the routers reachable from router i over links up.
func (s *sim) component(i int) []*simRouter {
	seen := map[*simRouter]bool{s.routers[i]: true}
	todo := []*simRouter{s.routers[i]}
	for len(todo) > 0 {
		r := todo[0]
		todo = todo[1:]
		for _, l := range r.peer {
			other := l.a
			if other == r {
				other = l.b
			}
			if !seen[other] {
				seen[other] = true
				todo = append(todo, other)
			}
		}
	}
	var out []*simRouter
	for _, r := range s.routers {
		if seen[r] {
			out = append(out, r)
		}
	}
	return out
}

func (s *sim) linkUp(a, b *simRouter) {
	ha, hb := a.mesh.Hello(), b.mesh.Hello()
	ida, outa, err := a.mesh.LinkUp(hb)
	if err != nil {
		s.t.Fatalf("link %s-%s refused at %s: %v", a.name, b.name, a.name, err)
	}
	idb, outb, err := b.mesh.LinkUp(ha)
	if err != nil {
		s.t.Fatalf("link %s-%s refused at %s: %v", a.name, b.name, b.name, err)
	}
	l := &simLink{a: a, b: b, ida: ida, idb: idb}
	s.links = append(s.links, l)
	a.peer[ida], b.peer[idb] = l, l
	s.epoch++
	a.trees.LinkUp(ida)
	b.trees.LinkUp(idb)
	s.send(a, a.dict.LinkUp(ida), outa)
	s.send(b, b.dict.LinkUp(idb), outb)
}

func (s *sim) linkDown(l *simLink) {
	l.closed = true
	s.epoch++
	delete(l.a.peer, l.ida)
	delete(l.b.peer, l.idb)
	for _, side := range []struct {
		r  *simRouter
		id mesh.Link
	}{{l.a, l.ida}, {l.b, l.idb}} {
		side.r.trees.LinkDown(side.id)
		d := side.r.dict.LinkDown(side.id)
		s.send(side.r, d, side.r.mesh.LinkDown(side.id))
	}
}

func (s *sim) subscribe(i int, f match.Filter) {
	r := s.routers[i]
	s.nextRef++
	ref := s.nextRef
	s.madeAt[ref], s.owner[ref], s.filters[ref] = s.epoch, i, f
	r.subs[ref] = f
	d := r.dict.AddFilter(f)
	out, err := r.mesh.Subscribe(1, ref, f)
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(r, d, out)
}

func (s *sim) unsubscribe(ref uint64) {
	r := s.routers[s.owner[ref]]
	out, err := r.mesh.Unsubscribe(1, ref, r.subs[ref])
	if err != nil {
		s.t.Fatal(err)
	}
	d, err := r.dict.RemoveFilter(r.subs[ref])
	if err != nil {
		s.t.Fatal(err)
	}
	delete(r.subs, ref)
	delete(s.filters, ref)
	s.send(r, d, out)
}

// deliverOne delivers the head of a random non-empty queue; false when
// every queue is empty.
func (s *sim) deliverOne() bool {
	type q struct {
		l   *simLink
		toA bool
	}
	var qs []q
	for _, l := range s.links {
		if l.closed {
			continue
		}
		if len(l.toA) > 0 {
			qs = append(qs, q{l, true})
		}
		if len(l.toB) > 0 {
			qs = append(qs, q{l, false})
		}
	}
	if len(qs) == 0 {
		return false
	}
	c := qs[s.rng.IntN(len(qs))]
	var frame []byte
	to, id := c.l.b, c.l.idb
	if c.toA {
		frame, c.l.toA = c.l.toA[0], c.l.toA[1:]
		to, id = c.l.a, c.l.ida
	} else {
		frame, c.l.toB = c.l.toB[0], c.l.toB[1:]
	}
	typ, body, _, err := wire.SplitFrame(frame, wire.HardMaxFrame)
	if err != nil {
		s.t.Fatal(err)
	}
	msg, err := wire.Decode(typ, body)
	if err != nil {
		s.t.Fatal(err)
	}
	s.receive(to, id, msg)
	return true
}

// receive mirrors the router's linkFrame: dictionary updates are applied
// and forwarded at once; everything else goes to the mesh, and Routes the
// mesh accepted update the trees.
func (s *sim) receive(r *simRouter, id mesh.Link, msg wire.Message) {
	if bt, ok := msg.(*wire.BloomTerms); ok {
		d, err := r.dict.Receive(id, bt)
		if err != nil {
			s.t.Fatalf("%s: %v", r.name, err)
		}
		s.send(r, d, mesh.Output{})
		return
	}
	out, err := r.mesh.Receive(id, msg)
	if err != nil {
		s.t.Fatalf("%s: %v", r.name, err)
	}
	if h := out.Held; h != nil { // as the router's core: the mesh's parsed change
		if err := r.trees.ApplyHeld(id, h.Add, h.Remove); err != nil {
			s.t.Fatalf("%s: %v", r.name, err)
		}
	}
	s.send(r, nil, out)
}

func (s *sim) quiesce() {
	for n := 0; s.deliverOne(); n++ {
		if n > 1_000_000 {
			s.t.Fatal("no quiescence after 1e6 messages")
		}
	}
}

// run performs steps random operations with random partial delivery.
func (s *sim) run(steps int) {
	up := map[[2]int]*simLink{}
	for range steps {
		switch op := s.rng.IntN(10); {
		case op < 4:
			s.subscribe(s.rng.IntN(len(s.routers)), bloomtest.RandomFilter(s.rng))
		case op < 5 && len(s.filters) > 0:
			refs := sortedRefs(s.filters)
			s.unsubscribe(refs[s.rng.IntN(len(refs))])
		case op < 7:
			e := s.edges[s.rng.IntN(len(s.edges))]
			if l := up[e]; l == nil || l.closed {
				s.linkUp(s.routers[e[0]], s.routers[e[1]])
				up[e] = s.links[len(s.links)-1]
			} else if s.rng.IntN(3) == 0 {
				s.linkDown(l)
			}
		default:
			for range s.rng.IntN(8) {
				s.deliverOne()
			}
		}
	}
}

func sortedRefs(m map[uint64]match.Filter) []uint64 {
	refs := make([]uint64, 0, len(m))
	for r := range m {
		refs = append(refs, r)
	}
	slices.Sort(refs)
	return refs
}

// checkQuiet: at quiescence every router holds exactly the terms of the
// subscriptions of its component, and events published anywhere reach,
// by summaries and trees with exact delivery at the last router, exactly
// the subscriptions of the component that match them.
func (s *sim) checkQuiet(events int) {
	for i, r := range s.routers {
		want := map[string]bool{}
		comp := s.component(i)
		for _, c := range comp {
			for _, f := range c.subs {
				for _, t := range s.p.Terms(f) {
					want[t.String()] = true
				}
			}
		}
		got := r.dict.Terms()
		if !slices.Equal(got, sortedKeys(want)) {
			s.t.Fatalf("%s holds terms %q, want %q", r.name, got, sortedKeys(want))
		}
	}
	for range events {
		from := s.rng.IntN(len(s.routers))
		e := bloomtest.RandomEvent(s.rng)
		var want []uint64
		for _, c := range s.component(from) {
			for ref, f := range c.subs {
				if f.Matches(e) {
					want = append(want, ref)
				}
			}
		}
		slices.Sort(want)
		r := s.routers[from]
		sum := r.dict.Summarize(e)
		got := s.route(r, 0, e, sum, nil)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			s.t.Fatalf("event %v from %s (fill %.2f) reached %v, want %v", e, r.name, sum.Fill, got, want)
		}
	}
}

// route delivers e at r (exactly, to local subscriptions) and forwards it
// on the links the trees pick (or, for an exact summary, the mesh).
func (s *sim) route(r *simRouter, from mesh.Link, e match.Event, sum Summary, got []uint64) []uint64 {
	for ref, f := range r.subs {
		if f.Matches(e) {
			got = append(got, ref)
		}
	}
	var to []mesh.Link
	if sum.Exact {
		to, _ = r.mesh.Route(e, from)
	} else {
		var err error
		if to, err = r.trees.Route(sum.Words, from, nil); err != nil {
			s.t.Fatal(err)
		}
	}
	for _, id := range to {
		l := r.peer[id]
		next, at := l.b, l.idb
		if l.b == r {
			next, at = l.a, l.ida
		}
		got = s.route(next, at, e, sum, got)
	}
	return got
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestReadyImpliesTerms runs random meshes (2-6 routers on a random tree,
// links coming and going, subscriptions and unsubscriptions, partial
// random delivery): a subscription made with the topology unchanged since
// is Ready only once its dictionary terms are at every router of its
// component; at quiescence every router holds exactly its component's
// terms, and Bloom forwarding delivers every event to exactly the
// subscriptions it matches (no false negatives despite covering).
func TestReadyImpliesTerms(t *testing.T) {
	checked := 0
	for _, index := range []string{IndexSBSTree, IndexBFTree} {
		for seed := uint64(1); seed <= 150; seed++ {
			s := newSim(t, seed, 2+int(seed%5), Config{Params: bloom.Params{M: 256, K: 2}, Index: index})
			s.run(120)
			if len(s.failures) > 0 {
				t.Fatalf("%s seed %d: %s", index, seed, s.failures[0])
			}
			s.quiesce()
			s.checkQuiet(30)
			checked += s.checked
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d Ready subscriptions were checked", checked)
	}
	t.Logf("%d Ready subscriptions checked", checked)
}

// TestReadyBeforeTermsWhenReversed is the mutation check of the ordering
// rule: sending the mesh's messages before the dictionary's lets some
// subscription be Ready while a router still lacks its terms.
func TestReadyBeforeTermsWhenReversed(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		s := newSim(t, seed, 3+int(seed%4), Config{})
		s.dictLast = true
		s.run(120)
		if len(s.failures) > 0 {
			t.Logf("seed %d: %s", seed, s.failures[0])
			return
		}
	}
	t.Fatal("with dictionary messages sent after the mesh's, no seed made a subscription Ready before its terms arrived")
}
