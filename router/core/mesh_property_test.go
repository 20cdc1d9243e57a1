package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/mesh"
	"pgregory.net/rapid"
)

// TestLinkedCoresAckImpliesTerms is bloomfwd's ordering promise checked on
// the core, which now keeps it: random meshes of 2-6 Bloom routers' cores
// on a random tree, linked through their Readys over FIFO links (frames
// encoded and decoded as on the wire), with subscriptions, unsubscriptions,
// clients leaving, links going down and up again, and frames delivered one
// at a time on random links. Whenever a client's subscription is
// acknowledged and no link changed since it was made, every router of its
// component holds all its dictionary terms. No Step fails, no link is
// closed, no subscription is acknowledged twice or after it was removed.
// Once every frame is delivered, every router holds exactly the terms of
// the subscriptions in its component, and every subscription alive was
// acknowledged. Each router's inputs, stepped again into a fresh core,
// give the same effects (the core is deterministic). Placing a subscription before flooding its terms (in
// links.go's subscribe) makes it fail within a few runs; the order of a new
// link's snapshots, which this property cannot see (it concerns
// subscriptions made before the link came up), is what the scripts
// bloom_order.txt and link_refuse.txt print.
func TestLinkedCoresAckImpliesTerms(t *testing.T) {
	var checked, acks int
	rapid.Check(t, func(rt *rapid.T) {
		s := newCoreMesh(rt)
		for range rapid.IntRange(1, 150).Draw(rt, "steps") {
			s.act()
			s.checkLinkTables()
		}
		s.quiesce()
		s.checkQuiet()
		s.checkReplay()
		checked += s.checked
		acks += s.acks
	})
	t.Logf("%d Acks, %d checked for terms with the topology unchanged", acks, checked)
	if checked < 200 {
		t.Fatalf("only %d Acks were checked for terms: weak test", checked)
	}
}

// coreMesh is the state of one run.
type coreMesh struct {
	rt      *rapid.T
	p       bloom.Params
	routers []*propRouter
	edges   [][2]int
	up      []*propLink // per edge: the link x -> y while up (its reverse is up.back)
	epoch   int         // bumped by every link change
	nextSub uint64
	subs    map[uint64]*propSub // alive
	acked   map[uint64]bool     // alive or not
	checked int
	acks    int
	exact   bool      // exact forwarding (else Bloom)
	events  *propData // the event path's record (events_property_test.go); nil: no events
}

type propRouter struct {
	name    string
	core    *Core
	inputs  []Input         // every input stepped, in order
	effects strings.Builder // every Ready, described
	next    ConnID
	links   map[ConnID]*propLink
	clients map[ConnID]bool // attached
}

// propLink is one direction of a link: frames from one router to the
// other, in order.
type propLink struct {
	from, to *propRouter
	conn     ConnID // the link's connection at to
	back     *propLink
	q        [][]byte
	data     []Forward // events forwarded, not yet delivered
}

type propSub struct {
	router int
	conn   ConnID
	f      match.Filter
	madeAt int
}

var propFilters = []string{
	`price > 10`, `price > 10 && volume < 5`, `symbol == "IBM"`, `symbol == "IBM" && price > 3`,
	`region == "eu" && price > 10`, `volume < 5`, `symbol == "ACME" && price < 2`, `region exists`,
}

var propBloom = bloomfwd.Config{Params: bloom.Params{M: 256, K: 2}}

// newPropCore returns the core of router name: Bloom mode unless exact,
// a fresh mesh and engine.
func newPropCore(rt *rapid.T, name string, exact bool) *Core {
	m, err := mesh.New(mesh.Config{Name: name, MaxLinks: 8, Incarnation: 1})
	if err != nil {
		rt.Fatal(err)
	}
	cfg := Config{Mesh: m, Bloom: &propBloom, Engine: NewEngine(match.NewFast(match.FastConfig{}), 0)}
	if exact {
		cfg.Bloom = nil
	}
	c, err := New(cfg)
	if err != nil {
		rt.Fatal(err)
	}
	return c
}

func newCoreMesh(rt *rapid.T) *coreMesh { return newCoreMeshMode(rt, false) }

// newCoreMeshMode returns a run's mesh: Bloom routers unless exact.
func newCoreMeshMode(rt *rapid.T, exact bool) *coreMesh {
	cfg := propBloom
	s := &coreMesh{rt: rt, p: cfg.Params.Resolved(), exact: exact, subs: map[uint64]*propSub{}, acked: map[uint64]bool{}}
	n := rapid.IntRange(2, 6).Draw(rt, "routers")
	for i := range n {
		name := fmt.Sprintf("r%d", i)
		s.routers = append(s.routers, &propRouter{name: name, core: newPropCore(rt, name, exact), next: 100, links: map[ConnID]*propLink{}, clients: map[ConnID]bool{}})
		if i > 0 {
			s.edges = append(s.edges, [2]int{rapid.IntRange(0, i-1).Draw(rt, "parent"), i})
			s.up = append(s.up, nil)
		}
	}
	for k := range s.edges {
		s.linkUp(k)
	}
	return s
}

// act takes one random action.
func (s *coreMesh) act() {
	switch rapid.IntRange(0, 9).Draw(s.rt, "action") {
	case 0, 1:
		i := rapid.IntRange(0, len(s.routers)-1).Draw(s.rt, "router")
		conn := ConnID(rapid.IntRange(1, 3).Draw(s.rt, "client"))
		f := match.MustParse(rapid.SampledFrom(propFilters).Draw(s.rt, "filter"))
		s.nextSub++
		s.subs[s.nextSub] = &propSub{router: i, conn: conn, f: f, madeAt: s.epoch}
		r := s.routers[i]
		if !r.clients[conn] {
			r.clients[conn] = true
			s.step(r, Attach{Conn: conn})
		}
		s.step(r, Subscribe{Conn: conn, Sub: s.nextSub, Filter: f.String()})
	case 2:
		if len(s.subs) == 0 {
			return
		}
		id := rapid.SampledFrom(slices.Sorted(maps.Keys(s.subs))).Draw(s.rt, "unsubscribe")
		sub := s.subs[id]
		delete(s.subs, id)
		s.step(s.routers[sub.router], Unsubscribe{Conn: sub.conn, Sub: id})
	case 3:
		i := rapid.IntRange(0, len(s.routers)-1).Draw(s.rt, "router")
		conn := ConnID(rapid.IntRange(1, 3).Draw(s.rt, "client"))
		for id, sub := range s.subs {
			if sub.router == i && sub.conn == conn {
				delete(s.subs, id)
			}
		}
		delete(s.routers[i].clients, conn)
		s.step(s.routers[i], Detach{Conn: conn})
	case 4:
		if len(s.edges) == 0 {
			return
		}
		k := rapid.IntRange(0, len(s.edges)-1).Draw(s.rt, "edge")
		if s.up[k] != nil {
			s.linkDown(k)
		} else {
			s.linkUp(k)
		}
	default:
		var busy []*propLink
		for _, r := range s.routers {
			for _, id := range slices.Sorted(maps.Keys(r.links)) {
				if l := r.links[id]; len(l.q) > 0 {
					busy = append(busy, l)
				}
			}
		}
		if len(busy) > 0 {
			s.deliverOne(rapid.SampledFrom(busy).Draw(s.rt, "link"))
		}
	}
}

// linkUp brings edge k up as two routers do: x dials with its hello, y
// takes it and answers, x takes y's hello (the first frame on the link).
func (s *coreMesh) linkUp(k int) {
	x, y := s.routers[s.edges[k][0]], s.routers[s.edges[k][1]]
	cx, cy := x.next, y.next
	x.next++
	y.next++
	xy := &propLink{from: x, to: y, conn: cy}
	yx := &propLink{from: y, to: x, conn: cx, back: xy}
	xy.back = yx
	x.links[cx], y.links[cy] = xy, yx
	s.epoch++
	if err := s.stepErr(y, LinkUp{Conn: cy, Hello: x.core.Hello(), SendHello: true}); err != nil {
		s.rt.Fatalf("%s refused the link from %s: %v", y.name, x.name, err)
	}
	h, ok := decodeFrame(s.rt, yx.q[0]).(*wire.LinkHello)
	if !ok {
		s.rt.Fatalf("%s's first frame to %s is not its hello", y.name, x.name)
	}
	yx.q = yx.q[1:]
	if err := s.stepErr(x, LinkUp{Conn: cx, Hello: h}); err != nil {
		s.rt.Fatalf("%s refused the link to %s: %v", x.name, y.name, err)
	}
	s.up[k] = xy
}

// linkDown takes edge k down at both ends; what was queued on it is lost.
func (s *coreMesh) linkDown(k int) {
	xy := s.up[k]
	s.up[k] = nil
	s.epoch++
	for _, l := range []*propLink{xy, xy.back} {
		delete(l.from.links, l.back.conn)
		l.q, l.data = nil, nil
	}
	s.step(xy.from, Detach{Conn: xy.back.conn})
	s.step(xy.to, Detach{Conn: xy.conn})
}

func (s *coreMesh) deliverOne(l *propLink) {
	m := decodeFrame(s.rt, l.q[0])
	l.q = l.q[1:]
	s.step(l.to, LinkFrame{Conn: l.conn, Msg: m})
}

func (s *coreMesh) step(r *propRouter, in Input) {
	if err := s.stepErr(r, in); err != nil {
		s.rt.Fatalf("%s: step %T: %v", r.name, in, err)
	}
}

// stepErr steps r's core and carries out its Readys: link frames onto
// their FIFOs, client Acks checked.
func (s *coreMesh) stepErr(r *propRouter, in Input) error {
	r.inputs = append(r.inputs, in)
	err := r.core.Step(in)
	for r.core.HasReady() {
		rd := r.core.Ready()
		r.effects.WriteString(DescribeReady(rd))
		for _, c := range rd.Close {
			s.rt.Fatalf("%s closed connection %d: %s", r.name, c.Conn, c.Reason)
		}
		s.carryEvents(r, &rd)
		for _, f := range rd.Frames {
			if l := r.links[f.Conn]; l != nil {
				l.q = append(l.q, f.Data)
				continue
			}
			ack, ok := decodeFrame(s.rt, f.Data).(*wire.Ack)
			if ok && ack.About == wire.TypePublish && s.events != nil {
				continue // a publisher's Ack (events_property_test.go checks the batch)
			}
			if !ok || ack.About != wire.TypeSubscribe {
				s.rt.Fatalf("%s sent client %d %s", r.name, f.Conn, DescribeFrame(f.Data))
			}
			s.ack(r, f.Conn, ack.ID)
		}
		r.core.Advance()
	}
	return err
}

// ack checks a subscription's Ack: once, for a subscription alive, and
// with its terms at every router of its component if no link changed
// since it was made.
func (s *coreMesh) ack(r *propRouter, conn ConnID, id uint64) {
	s.acks++
	sub := s.subs[id]
	switch {
	case s.acked[id]:
		s.rt.Fatalf("%s acknowledged subscription %d twice", r.name, id)
	case sub == nil:
		s.rt.Fatalf("%s acknowledged subscription %d, removed", r.name, id)
	case s.routers[sub.router] != r || sub.conn != conn:
		s.rt.Fatalf("%s acknowledged subscription %d to client %d, not its owner's", r.name, id, conn)
	}
	s.acked[id] = true
	if sub.madeAt != s.epoch || s.exact {
		return
	}
	s.checked++
	for _, other := range s.component(sub.router) {
		for _, term := range s.p.Terms(sub.f) {
			if !other.core.BloomDict().Has(term) {
				s.rt.Fatalf("subscription %d (%s) at %s acknowledged while %s lacks its term %s", id, sub.f, r.name, other.name, term)
			}
		}
	}
}

// component returns the routers reachable from router i over links up.
func (s *coreMesh) component(i int) []*propRouter {
	seen := map[*propRouter]bool{s.routers[i]: true}
	todo := []*propRouter{s.routers[i]}
	for len(todo) > 0 {
		r := todo[0]
		todo = todo[1:]
		for _, l := range r.links {
			if !seen[l.to] {
				seen[l.to] = true
				todo = append(todo, l.to)
			}
		}
	}
	var out []*propRouter
	for _, r := range s.routers {
		if seen[r] {
			out = append(out, r)
		}
	}
	return out
}

// quiesce delivers every frame queued, in turn over the links.
func (s *coreMesh) quiesce() {
	for {
		moved := false
		for _, r := range s.routers {
			for _, id := range slices.Sorted(maps.Keys(r.links)) {
				if l := r.links[id]; len(l.q) > 0 {
					s.deliverOne(l)
					moved = true
				}
			}
		}
		if !moved {
			return
		}
	}
}

// checkQuiet: every router holds exactly its component's terms, its
// engine's interfaces are its links (neighbours) and attached clients,
// and every subscription alive was acknowledged.
func (s *coreMesh) checkQuiet() {
	for _, r := range s.routers {
		want := map[ConnID]IfaceKind{}
		for id := range r.links {
			want[id] = KindNeighbour
		}
		for id := range r.clients {
			want[id] = KindClient
		}
		got := map[ConnID]IfaceKind{}
		for id, st := range r.core.eng.Ifaces {
			got[id] = st.kind
		}
		if !maps.Equal(got, want) {
			s.rt.Fatalf("%s's engine has interfaces %v, want %v (links and clients)", r.name, got, want)
		}
	}
	for i, r := range s.routers {
		want := map[string]bool{}
		for _, other := range s.component(i) {
			for _, sub := range s.subs {
				if s.routers[sub.router] == other {
					for _, term := range s.p.Terms(sub.f) {
						want[term.String()] = true
					}
				}
			}
		}
		if got, w := r.core.BloomDict().Terms(), slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
			s.rt.Fatalf("at rest %s holds terms %q, want %q", r.name, got, w)
		}
	}
	for id := range s.subs {
		if !s.acked[id] {
			s.rt.Fatalf("subscription %d alive and never acknowledged", id)
		}
	}
}

// checkLinkTables checks, after any step, that each router's link table
// holds per link exactly the filters (with multiplicity) its mesh holds
// from that link: the table applies the mesh's parsed changes
// (mesh.HeldChange), never the messages' texts. The filters the table
// holds are under their own witness.
func (s *coreMesh) checkLinkTables() {
	for _, r := range s.routers {
		lt := r.core.LinkTable()
		received := map[mesh.Link][]string{}
		for _, lr := range r.core.mesh.Routes() {
			received[lr.Link] = lr.Received
		}
		for conn, link := range r.core.linkOf {
			var got []string
			if lt != nil {
				for w, fs := range lt.Witnessed(conn) {
					for _, f := range fs {
						if wire.FilterHash(f.String()) != w {
							s.rt.Fatalf("%s link table, conn %d: %s under witness %x", r.name, conn, f, w)
						}
						got = append(got, f.String())
					}
				}
			}
			slices.Sort(got)
			if want := received[link]; !slices.Equal(got, want) {
				s.rt.Fatalf("%s conn %d: link table holds %q, the mesh %q", r.name, conn, got, want)
			}
		}
	}
}

// checkReplay steps each router's inputs again, in order, into a fresh
// core: the effects must be the same.
func (s *coreMesh) checkReplay() {
	for _, r := range s.routers {
		c := newPropCore(s.rt, r.name, s.exact)
		var again strings.Builder
		for _, in := range r.inputs {
			c.Step(in) // its error, if any, was the same the first time
			for c.HasReady() {
				again.WriteString(DescribeReady(c.Ready()))
				c.Advance()
			}
		}
		if got, want := again.String(), r.effects.String(); got != want {
			s.rt.Fatalf("%s: %d inputs stepped again gave other effects:\n%s\nfirst time:\n%s", r.name, len(r.inputs), got, want)
		}
	}
}
