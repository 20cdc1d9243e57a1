package core

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"pgregory.net/rapid"
)

// TestLinkedCoresDeliverExactly checks the event path of linked cores
// against brute force over the clients' subscriptions: random meshes of
// 2-6 cores on a random tree, exact or Bloom forwarding, with the churn of
// TestLinkedCoresAckImpliesTerms (subscriptions, unsubscriptions, clients
// leaving, links down and up, control frames delivered one at a time on
// random links) and batches published by random clients, whose forwarded
// events wait on each link's data FIFO and cross it as one LinkPublish or
// BloomPublish batch, encoded and decoded as on the wire. At any time: a
// client gets an event only for subscriptions of its that match it, at
// most once, and an event crosses a link at most once, never back the way
// it came. Once the mesh is quiet, a last round of batches from every
// router: every client gets each matching event exactly once with exactly
// its matching subscriptions, and in exact mode every directed link
// carried exactly the events that some subscription beyond it matches
// (the link tables, their witnesses and caches neither lost nor added
// one). This is the core-level form of router's in-process mesh test,
// which drives whole matching loops.
func TestLinkedCoresDeliverExactly(t *testing.T) {
	var rounds, delivered, forwarded int
	rapid.Check(t, func(rt *rapid.T) {
		s := newCoreMeshMode(rt, rapid.Bool().Draw(rt, "exact"))
		s.events = &propData{got: map[propClient]map[string][]uint64{}, crossed: map[propEdge]map[string]bool{}}
		for range rapid.IntRange(1, 150).Draw(rt, "steps") {
			switch rapid.IntRange(0, 4).Draw(rt, "event action") {
			case 0:
				s.publishRandom(false)
			case 1:
				s.deliverData(rapid.Bool().Draw(rt, "one link"))
			default:
				s.act()
			}
		}
		s.quiesce()
		for s.deliverData(false) {
			s.quiesce()
		}
		s.events.reset()
		s.publishRandom(true)
		for s.deliverData(false) {
		}
		s.checkAtRest()
		rounds++
		delivered += s.events.delivered
		forwarded += s.events.forwarded
	})
	t.Logf("%d runs, %d deliveries, %d events forwarded on links", rounds, delivered, forwarded)
	// The floors catch a generator that stopped producing traffic, not a
	// thin draw: 100 runs give about 1,900 deliveries and 690 forwards
	// (standard deviations about 280 and 120), so each floor sits four or
	// more deviations below its mean.
	if delivered < 500 || forwarded < 200 {
		t.Fatalf("%d deliveries and %d forwards: weak test", delivered, forwarded)
	}
}

// propData is the record of the events published and where they went.
type propData struct {
	n         int                                // events published, for unique events
	published []propPub                          // since the last reset
	got       map[propClient]map[string][]uint64 // per client: event -> subs delivered
	crossed   map[propEdge]map[string]bool       // per directed link: events carried
	delivered int
	forwarded int
}

type propPub struct {
	router int
	ev     match.Event
}

type propClient struct {
	router int
	conn   ConnID
}

// propEdge is a directed link, by router index.
type propEdge struct{ from, to int }

func (d *propData) reset() {
	d.published = nil
	clear(d.got)
	clear(d.crossed)
}

var propSymbols = []string{"IBM", "ACME", "XYZ"}

// event draws an event over the attributes propFilters name, numbered so
// that every event is distinct.
func (s *coreMesh) event() match.Event {
	d := s.events
	d.n++
	text := fmt.Sprintf(`{"n": %d, "symbol": %q, "price": %d`, d.n, rapid.SampledFrom(propSymbols).Draw(s.rt, "symbol"), rapid.IntRange(0, 20).Draw(s.rt, "price"))
	if rapid.Bool().Draw(s.rt, "has volume") {
		text += fmt.Sprintf(`, "volume": %d`, rapid.IntRange(0, 9).Draw(s.rt, "volume"))
	}
	if rapid.Bool().Draw(s.rt, "has region") {
		text += fmt.Sprintf(`, "region": %q`, rapid.SampledFrom([]string{"eu", "us"}).Draw(s.rt, "region"))
	}
	ev, err := match.ParseEventJSON([]byte(text + "}"))
	if err != nil {
		s.rt.Fatal(err)
	}
	return ev
}

// publishRandom has a random client publish a batch at one random router
// (every router, when all).
func (s *coreMesh) publishRandom(all bool) {
	for i, r := range s.routers {
		if !all && i != rapid.IntRange(0, len(s.routers)-1).Draw(s.rt, "publisher's router") {
			continue
		}
		conn := ConnID(rapid.IntRange(4, 5).Draw(s.rt, "publisher")) // publishers only: 1-3 subscribe
		if !r.clients[conn] {
			r.clients[conn] = true
			s.step(r, Attach{Conn: conn})
		}
		p := &wire.Publish{Seq: uint64(s.events.n + 1)}
		for range rapid.IntRange(1, 8).Draw(s.rt, "batch") {
			ev := s.event()
			p.Events = append(p.Events, ev)
			p.Raw = append(p.Raw, wire.AppendEvent(nil, ev))
			s.events.published = append(s.events.published, propPub{router: i, ev: ev})
		}
		s.step(r, Publish{Conn: conn, Pub: p})
		if !all {
			return
		}
	}
}

// deliverData sends the events waiting on one random link (or on every
// link in turn) as one batch each; it reports whether any moved.
func (s *coreMesh) deliverData(one bool) bool {
	var busy []*propLink
	for _, r := range s.routers {
		for _, id := range slices.Sorted(maps.Keys(r.links)) {
			if l := r.links[id]; len(l.data) > 0 {
				busy = append(busy, l)
			}
		}
	}
	if one && len(busy) > 0 {
		busy = []*propLink{rapid.SampledFrom(busy).Draw(s.rt, "data link")}
	}
	for _, l := range busy {
		ml := &meshLink{conn: l.conn, data: l.data, from: &meshRouter{name: l.from.name, opts: routerOpts{bloom: !s.exact}}, to: &meshRouter{name: l.to.name}}
		l.data = nil
		s.step(l.to, dataBatch(s.rt, ml))
	}
	return len(busy) > 0
}

// carryEvents records a Ready's deliveries (checked against the
// subscriptions at once) and queues its forwards on their links.
func (s *coreMesh) carryEvents(r *propRouter, rd *Ready) {
	d := s.events
	if d == nil {
		if len(rd.Deliveries)+len(rd.Forwards) > 0 {
			s.rt.Fatalf("%s: deliveries or forwards without events published", r.name)
		}
		return
	}
	i := s.index(r)
	for _, dl := range rd.Deliveries {
		ev := decodeEvent(s.rt, dl.Event)
		key, cl := ev.String(), propClient{router: i, conn: dl.Conn}
		for _, id := range dl.Subs {
			sub := s.subs[id]
			if sub == nil || sub.router != i || sub.conn != dl.Conn || !sub.f.Matches(ev) {
				s.rt.Fatalf("%s delivered %s to client %d for subscription %d, which is not its or does not match", r.name, key, dl.Conn, id)
			}
		}
		if d.got[cl] == nil {
			d.got[cl] = map[string][]uint64{}
		}
		if _, dup := d.got[cl][key]; dup {
			s.rt.Fatalf("%s delivered %s to client %d twice", r.name, key, dl.Conn)
		}
		d.got[cl][key] = slices.Clone(dl.Subs)
		d.delivered++
	}
	for _, f := range rd.Forwards {
		l := r.links[f.Conn]
		if l == nil {
			s.rt.Fatalf("%s forwarded to connection %d, no link", r.name, f.Conn)
		}
		s.crossed(l, f)
		l.data = append(l.data, Forward{Conn: f.Conn, Data: slices.Clone(f.Data), Witness: f.Witness})
	}
}

// crossed records an event forwarded on link l: once per direction, and
// never both ways (it would have come back).
func (s *coreMesh) crossed(l *propLink, f Forward) {
	d := s.events
	raw := f.Data
	if !s.exact {
		m, err := wire.Decode(wire.TypeBloomPublish, append([]byte{0, 1}, raw...))
		if err != nil {
			s.rt.Fatalf("%s forwarded a bad bloom entry: %v", l.from.name, err)
		}
		raw = m.(*wire.BloomPublish).Events[0].Event
	}
	key := decodeEvent(s.rt, raw).String()
	e := propEdge{from: s.index(l.from), to: s.index(l.to)}
	if d.crossed[e] == nil {
		d.crossed[e] = map[string]bool{}
	}
	if d.crossed[e][key] || d.crossed[propEdge{from: e.to, to: e.from}][key] {
		s.rt.Fatalf("%s forwarded %s to %s again or back", l.from.name, key, l.to.name)
	}
	d.crossed[e][key] = true
	d.forwarded++
}

// checkAtRest checks the last round against brute force (see the test).
func (s *coreMesh) checkAtRest() {
	d := s.events
	for _, p := range d.published {
		key := p.ev.String()
		for _, i := range s.componentIdx(p.router) {
			want := map[ConnID][]uint64{}
			for _, id := range slices.Sorted(maps.Keys(s.subs)) {
				if sub := s.subs[id]; sub.router == i && sub.f.Matches(p.ev) {
					want[sub.conn] = append(want[sub.conn], id)
				}
			}
			for conn := ConnID(1); conn <= 3; conn++ {
				got, ok := d.got[propClient{router: i, conn: conn}][key]
				if !slices.Equal(got, want[conn]) || ok != (len(want[conn]) > 0) {
					s.rt.Fatalf("event %s from %s: client %d at %s got subscriptions %v (delivered %t), want %v", key, s.routers[p.router].name, conn, s.routers[i].name, got, ok, want[conn])
				}
			}
		}
		if s.exact {
			s.checkLinks(p, key)
		}
	}
}

// checkLinks: in exact mode an event crossed each directed link of its
// component away from its publisher exactly when a subscription beyond
// the link matches it.
func (s *coreMesh) checkLinks(p propPub, key string) {
	for k, l := range s.up {
		if l == nil {
			continue
		}
		x, y := s.edges[k][0], s.edges[k][1]
		for _, e := range []propEdge{{x, y}, {y, x}} {
			beyond := s.beyond(e)
			want := !slices.Contains(beyond, p.router) && slices.ContainsFunc(beyond, func(i int) bool {
				for _, sub := range s.subs {
					if sub.router == i && sub.f.Matches(p.ev) {
						return true
					}
				}
				return false
			})
			if got := s.events.crossed[e][key]; got != want && slices.Contains(s.componentIdx(p.router), e.from) {
				s.rt.Fatalf("event %s from %s crossed %s -> %s: %t, want %t", key, s.routers[p.router].name, s.routers[e.from].name, s.routers[e.to].name, got, want)
			}
		}
	}
}

// beyond returns the routers reachable from e.to over links up without
// crossing back over e.
func (s *coreMesh) beyond(e propEdge) []int {
	seen := map[int]bool{e.to: true, e.from: true}
	todo, out := []int{e.to}, []int{e.to}
	for len(todo) > 0 {
		i := todo[0]
		todo = todo[1:]
		for _, l := range s.routers[i].links {
			if j := s.index(l.to); !seen[j] {
				seen[j] = true
				todo = append(todo, j)
				out = append(out, j)
			}
		}
	}
	return out
}

// componentIdx is component by router index.
func (s *coreMesh) componentIdx(i int) []int {
	var out []int
	for _, r := range s.component(i) {
		out = append(out, s.index(r))
	}
	return out
}

func (s *coreMesh) index(r *propRouter) int {
	i := slices.Index(s.routers, r)
	if i < 0 {
		s.rt.Fatalf("router %s not in the mesh", r.name)
	}
	return i
}

func decodeEvent(t interface{ Fatalf(string, ...any) }, raw []byte) match.Event {
	var dec wire.EventDecoder
	ev, err := dec.DecodeEvent(raw)
	if err != nil {
		t.Fatalf("an undecodable event: %v", err)
	}
	return ev
}
