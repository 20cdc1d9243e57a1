package router

import (
	"fmt"
	"github.com/sift-pubsub/sift/router/core"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// TestLinkWitnessMeshAtRest runs a few matching loops linked in a random
// tree, in process and step by step (no QUIC, no goroutines: the test
// carries every queued control frame and LinkPublish batch to the peer's
// loop, encoded and decoded as on the wire, each router decoding with its
// own wanted names), through rounds of churn: subscribe, unsubscribe, a
// client leaving, a link going down and coming back (a snapshot resync
// under new interface ids), routers with and without merging, and a third
// of the meshes with advertisements (each client advertises and publishes
// only what it advertised). After each round it runs the mesh until
// quiet and publishes events from random clients; then, against brute
// force over the clients' subscriptions:
//   - every directed link carried exactly the events some subscription
//     beyond it matches (coming from the publisher's side): the link
//     tables' witnesses and caches neither lost nor added one;
//   - every witness sent named a filter the receiver had sent that the
//     event matches;
//   - every client got each matching event once, with exactly its
//     matching subscription ids, and every subscription was acknowledged.
//
// Events published during churn are held to what holds at any time: a
// client gets an event only for subscriptions of its that match it, once;
// an event crosses an edge once at most, one way.
//
// Replay a failure with SIFT_SEED printed in the log.
func TestLinkWitnessMeshAtRest(t *testing.T) {
	seed := seedFromEnv(t)
	var decided [core.NumDecisions]float64
	stale := 0
	for run := range 20 {
		s := newMeshSim(t, seed+uint64(run))
		for round := range 40 {
			s.churn()
			s.runUntilQuiet()
			s.checkInFlight(round)
			s.checkAcks(round)
			s.publishRound(round)
		}
		stale += s.stale
		for _, r := range s.routers {
			for d, name := range [...]string{core.DecidedByIndex: "index", core.DecidedByWitness: "witness", core.DecidedByCache: "cache"} {
				decided[d] += counterValue(r.l.metrics.LinkTable.Events.WithLabelValues(name))
			}
		}
	}
	t.Logf("link tables decided by index %v, witness %v, cache %v; %d batches decoded again", decided[core.DecidedByIndex], decided[core.DecidedByWitness], decided[core.DecidedByCache], stale)
	if stale == 0 {
		t.Errorf("no link batch was routed after its wanted names grew: weak test")
	}
	for d := range core.DecidedNoLinks {
		if decided[d] == 0 {
			t.Errorf("no event decided by %d: weak test (%v)", d, decided)
		}
	}
}

func counterValue(c prometheus.Counter) float64 {
	var d dto.Metric
	c.Write(&d)
	return d.Counter.GetValue()
}

// seedFromEnv returns SIFT_SEED if set, else a fresh seed, logged.
func seedFromEnv(t *testing.T) uint64 {
	seed := rand.Uint64()
	if s := os.Getenv("SIFT_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("SIFT_SEED %q: %v", s, err)
		}
	}
	t.Logf("seed %d (replay: SIFT_SEED=%d go test -run %s ./router)", seed, seed, t.Name())
	return seed
}

var meshSimFilters = []string{
	`symbol == "A"`, `symbol == "A" && price > 5`, `symbol == "B" && price <= 4`,
	`symbol prefix "A"`, `price < 3`, `x == 5`, `x == 5.0 && symbol == "C"`,
	`volume exists && price >= 7`, `symbol == "C"`, `symbol != "B" && x > 4`,
	`volume < 10`, `symbol == "AB" && volume > 50`,
	`t0 exists`, `t1 exists && price > 2`, `t2 exists`, `t3 exists && symbol == "A"`,
	`t4 exists`, `t5 exists`, `t6 exists && x == 5`, `t7 exists`,
}

// meshSim is the state of the simulated mesh and its brute-force model.
type meshSim struct {
	t       *testing.T
	rng     *rand.Rand
	routers []*simRouter
	edges   [][2]int  // the tree; each edge up or down
	up      []simLink // by edge index; zero ifaces when down
	next    ifaceID   // interface ids, unique over the whole mesh
	seq     uint64    // event numbers
	// sent[i][j] lists the raw events router i forwarded to router j in
	// the current round.
	sent map[[2]int][]string
	// atRest: no control frame is in flight (publishRound), so each
	// witness can be checked against the sender's link table.
	atRest bool
	stale  int // link batches routed after the receiver's wanted names grew
	// advertise: the routers run advertisements; each client advertises
	// one or two filters of meshSimAdverts and publishes only events that
	// match one.
	advertise bool
}

var meshSimAdverts = []string{`symbol == "A"`, `symbol prefix "A"`, `price < 5`, `x exists`, `symbol == "C" && volume exists`}

type simRouter struct {
	name    string
	l       *matchLoop
	clients map[ifaceID]*simClient
}

type simClient struct {
	c       *conn
	adverts []match.Filter
	subs    map[uint64]string // current subscriptions
	ever    map[uint64]string // every subscription it had (ids are not reused)
	acked   map[uint64]bool
	next    uint64
}

// simLink is an edge's two interfaces, at edges[k][0] and edges[k][1].
type simLink struct{ a, b ifaceID }

func newMeshSim(t *testing.T, seed uint64) *meshSim {
	s := &meshSim{t: t, rng: rand.New(rand.NewPCG(seed, 7)), sent: map[[2]int][]string{}}
	s.advertise = s.rng.IntN(3) == 0
	n := 3 + s.rng.IntN(4)
	for i := range n {
		cfg := Config{Name: fmt.Sprintf("r%d", i), MaxLinks: 8, Merge: s.rng.IntN(3) == 0, Table: []string{"poset", "forest"}[s.rng.IntN(2)], Advertise: s.advertise}
		eng := core.NewEngine(match.NewFast(match.FastConfig{}), 0)
		lk, err := newLinks(cfg, eng)
		if err != nil {
			t.Fatal(err)
		}
		r := &simRouter{name: cfg.Name, clients: map[ifaceID]*simClient{},
			l: &matchLoop{eng: eng, conns: map[ifaceID]*conn{}, metrics: NewMetrics(nil), links: lk}}
		r.l.startWanted()
		s.routers = append(s.routers, r)
		if i > 0 {
			s.edges = append(s.edges, [2]int{s.rng.IntN(i), i})
			s.up = append(s.up, simLink{})
		}
	}
	t.Logf("seed %d: %d routers, tree %v, advertisements %v", seed, n, s.edges, s.advertise)
	for k := range s.edges {
		s.linkUp(k)
	}
	for i := range s.routers {
		s.attachClient(i)
	}
	return s
}

func (s *meshSim) newConn() *conn {
	s.next++
	return &conn{id: s.next, q: newSendQueue(1<<16, 1<<22), log: slog.New(slog.DiscardHandler)}
}

func (s *meshSim) attachClient(i int) {
	r := s.routers[i]
	c := s.newConn()
	r.l.step(loopMsg{in: core.Attach{Conn: c.id}, conn: c})
	cl := &simClient{c: c, subs: map[uint64]string{}, ever: map[uint64]string{}, acked: map[uint64]bool{}}
	r.clients[c.id] = cl
	if !s.advertise {
		return
	}
	for k := range 1 + s.rng.IntN(2) {
		f := meshSimAdverts[s.rng.IntN(len(meshSimAdverts))]
		cl.adverts = append(cl.adverts, match.MustParse(f))
		ad := &wire.Advertise{ID: uint64(k + 1), Filter: f}
		r.l.step(coreMsg(core.Advertise{Conn: c.id, ID: ad.ID, Filter: ad.Filter}))
	}
}

// events returns up to n new events cl may publish: with advertisements,
// only events one of its advertisements matches.
func (s *meshSim) events(cl *simClient, n int) []match.Event {
	var evs []match.Event
	for range 20 * n {
		if len(evs) == n {
			break
		}
		ev := s.event()
		if len(cl.adverts) == 0 || slices.ContainsFunc(cl.adverts, func(f match.Filter) bool { return f.Matches(ev) }) {
			evs = append(evs, ev)
		}
	}
	return evs
}

// linkUp brings edge k up: both routers take the other's hello.
func (s *meshSim) linkUp(k int) {
	a, b := s.routers[s.edges[k][0]], s.routers[s.edges[k][1]]
	ca, cb := s.newConn(), s.newConn()
	ha, hb := a.l.mesh.HelloTo(b.name), b.l.mesh.HelloTo(a.name)
	for _, side := range []struct {
		r     *simRouter
		c     *conn
		hello *wire.LinkHello
	}{{a, ca, hb}, {b, cb, ha}} {
		verdict := make(chan error, 1)
		side.r.l.step(loopMsg{in: core.LinkUp{Conn: side.c.id, Hello: side.hello}, conn: side.c, linkErr: verdict})
		if err := <-verdict; err != nil {
			s.t.Fatalf("link %s - %s: %v", a.name, b.name, err)
		}
	}
	s.up[k] = simLink{a: ca.id, b: cb.id}
}

// linkDown takes edge k down at both ends; what was queued on it is lost.
func (s *meshSim) linkDown(k int) {
	for end, id := range []ifaceID{s.up[k].a, s.up[k].b} {
		s.routers[s.edges[k][end]].l.step(loopMsg{in: core.Detach{Conn: id}})
	}
	s.up[k] = simLink{}
}

// churn changes subscriptions, clients and links at random, with events
// published and frames carried in between.
func (s *meshSim) churn() {
	clear(s.sent)
	s.atRest = false
	for range 1 + s.rng.IntN(6) {
		i := s.rng.IntN(len(s.routers))
		r := s.routers[i]
		switch op := s.rng.IntN(14); {
		case op >= 12:
			s.pass()
		case op >= 10:
			cl := s.pickClient(r)
			if evs := s.events(cl, 2); len(evs) > 0 {
				r.l.step(readBatchFrom(r.l, cl.c.id, evs...))
			}
		case op < 5:
			cl := s.pickClient(r)
			cl.next++
			f := meshSimFilters[s.rng.IntN(len(meshSimFilters))]
			cl.subs[cl.next], cl.ever[cl.next] = f, f
			r.l.step(coreMsg(core.Subscribe{Conn: cl.c.id, Sub: cl.next, Filter: f}))
		case op < 8:
			cl := s.pickClient(r)
			if len(cl.subs) == 0 {
				continue
			}
			ids := slices.Sorted(maps.Keys(cl.subs))
			sub := ids[s.rng.IntN(len(ids))]
			delete(cl.subs, sub)
			r.l.step(coreMsg(core.Unsubscribe{Conn: cl.c.id, Sub: sub}))
		case op == 8:
			cl := s.pickClient(r)
			r.l.step(loopMsg{in: core.Detach{Conn: cl.c.id}})
			delete(r.clients, cl.c.id)
			s.attachClient(i)
		default:
			if len(s.edges) == 0 {
				continue
			}
			if k := s.rng.IntN(len(s.edges)); s.up[k].a != 0 {
				s.linkDown(k)
			} else {
				s.linkUp(k)
			}
		}
	}
	if s.rng.IntN(4) == 0 { // most rounds end with every link up
		return
	}
	for k := range s.edges {
		if s.up[k].a == 0 {
			s.linkUp(k)
		}
	}
}

func (s *meshSim) pickClient(r *simRouter) *simClient {
	ids := slices.Sorted(maps.Keys(r.clients))
	return r.clients[ids[s.rng.IntN(len(ids))]]
}

// runUntilQuiet carries queued frames between the routers until none is
// left.
func (s *meshSim) runUntilQuiet() {
	for n := 0; s.pass(); n++ {
		if n > 1000 {
			s.t.Fatalf("the mesh does not settle")
		}
	}
}

// pass carries what is queued once, and reports whether anything was. It
// decodes the data batches first (with the receiver's wanted names of that
// moment), then delivers the control frames, then the batches: a batch may
// so be routed after Routes that named new attributes (the loop must
// decode it again).
func (s *meshSim) pass() bool {
	var data []func()
	moved := false
	for k, e := range s.edges {
		if s.up[k].a == 0 {
			continue
		}
		for dir := range 2 {
			from, to := e[dir], e[1-dir]
			src, dst := s.up[k].a, s.up[k].b
			if dir == 1 {
				src, dst = dst, src
			}
			c := s.routers[from].l.conns[src]
			if m, ok := s.carryData(from, to, c, dst); ok {
				data = append(data, m)
				moved = true
			}
			for _, frame := range c.q.takeControl(nil) {
				moved = true
				s.carryControl(to, dst, frame)
			}
		}
	}
	for _, m := range data {
		m()
	}
	for _, r := range s.routers {
		for _, cl := range r.clients {
			s.readAcks(cl)
		}
	}
	return moved
}

// carryData takes what router from queued on c for router to, records
// it, checks each witness and returns the step that hands it to to's loop
// as a LinkPublish batch read by a link's data reader.
func (s *meshSim) carryData(from, to int, c *conn, dst ifaceID) (func(), bool) {
	ds := c.q.takeData(nil)
	if len(ds) == 0 {
		return nil, false
	}
	var batch wire.LinkPublishBatch
	for _, d := range ds {
		if s.atRest {
			s.checkWitness(from, c.id, d)
		}
		s.sent[[2]int{from, to}] = append(s.sent[[2]int{from, to}], string(d.raw))
		batch.AddRaw(d.raw, d.witness)
	}
	frame := batch.Frame(1)
	r := s.routers[to]
	var dec wire.EventDecoder
	var ver uint64
	dec.Wanted, ver = r.l.want.load()
	m, err := dec.DecodeOwnedLinkPublish(slices.Clone(frame[wire.HeaderLen+1:]))
	if err != nil {
		s.t.Fatalf("%s's link-publish batch does not decode: %v", s.routers[from].name, err)
	}
	return func() {
		if r.l.want.stale(ver) {
			s.stale++
		}
		r.l.step(loopMsg{in: core.Publish{Conn: dst, Pub: &m.Publish, Witness: m.Witness}, wantVer: ver})
	}, true
}

// checkWitness checks that d's witness names a filter link c's peer sent
// router from (in from's link table) that the event matches.
func (s *meshSim) checkWitness(from int, link ifaceID, d delivery) {
	ev, err := (&wire.EventDecoder{}).DecodeEvent(d.raw)
	if err != nil {
		s.t.Fatal(err)
	}
	lt := s.routers[from].l.core.LinkTable()
	var held []string
	for w, subs := range lt.Subs[link] {
		for _, sub := range subs {
			f, _ := lt.Engine.Filter(link, sub)
			if wire.FilterHash(f.String()) != w {
				s.t.Fatalf("%s link %d: filter %s held under witness %x, its own is %x", s.routers[from].name, link, f, w, wire.FilterHash(f.String()))
			}
			if w == d.witness && f.Matches(ev) {
				return
			}
			held = append(held, f.String())
		}
	}
	slices.Sort(held)
	s.t.Fatalf("%s forwards %v on link %d with witness %x: no filter it holds from there that the event matches (%v)",
		s.routers[from].name, ev, link, d.witness, held)
}

func (s *meshSim) carryControl(to int, dst ifaceID, frame []byte) {
	typ, body, _, err := wire.SplitFrame(frame, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	msg, err := wire.Decode(typ, body)
	if err != nil {
		s.t.Fatalf("control frame %s does not decode: %v", typ, err)
	}
	s.routers[to].l.step(coreMsg(core.LinkFrame{Conn: dst, Msg: msg}))
}

// readAcks records the subscriptions a client had acknowledged.
func (s *meshSim) readAcks(cl *simClient) {
	for _, frame := range cl.c.q.takeControl(nil) {
		typ, body, _, err := wire.SplitFrame(frame, 0)
		if err != nil {
			s.t.Fatal(err)
		}
		msg, err := wire.Decode(typ, body)
		if err != nil {
			s.t.Fatal(err)
		}
		if a, ok := msg.(*wire.Ack); ok && a.About == wire.TypeSubscribe {
			cl.acked[a.ID] = true
		}
	}
}

func (s *meshSim) checkAcks(round int) {
	for _, r := range s.routers {
		for _, cl := range r.clients {
			for sub, f := range cl.subs {
				if !cl.acked[sub] {
					s.t.Fatalf("round %d: %s client %d subscription %d (%s) never acknowledged", round, r.name, cl.c.id, sub, f)
				}
			}
		}
	}
}

// publishRound publishes a few batches from random clients, runs the mesh
// until quiet and checks links and clients against brute force.
func (s *meshSim) publishRound(round int) {
	clear(s.sent)
	s.atRest = true
	for _, r := range s.routers {
		for _, cl := range r.clients {
			queuedItems(s.t, cl.c) // nothing is pending: start clean
		}
	}
	var pubs []simPub
	for range 2 + s.rng.IntN(4) {
		i := s.rng.IntN(len(s.routers))
		cl := s.pickClient(s.routers[i])
		evs := s.events(cl, 1+s.rng.IntN(4))
		if len(evs) == 0 {
			continue
		}
		for _, ev := range evs {
			pubs = append(pubs, simPub{at: i, ev: ev})
		}
		s.routers[i].l.step(readBatchFrom(s.routers[i].l, cl.c.id, evs...))
	}
	s.runUntilQuiet()
	s.checkLinks(round, pubs)
	s.checkClients(round, pubs)
}

type simPub struct {
	at int
	ev match.Event
}

// readBatchFrom is readBatch for client iface.
func readBatchFrom(l *matchLoop, iface ifaceID, evs ...match.Event) loopMsg {
	m := readBatch(l, evs...)
	in := m.in.(core.Publish)
	in.Conn = iface
	m.in = in
	return m
}

func (s *meshSim) event() match.Event {
	s.seq++
	attrs := []match.Attr{
		{Name: "n", Value: match.Int(int64(s.seq))},
		{Name: "symbol", Value: match.Str([]string{"A", "AB", "B", "C"}[s.rng.IntN(4)])},
	}
	if s.rng.IntN(2) == 0 {
		attrs = append(attrs, match.Attr{Name: "price", Value: match.Int(int64(s.rng.IntN(11)))})
	} else {
		attrs = append(attrs, match.Attr{Name: "price", Value: match.MustFloat(float64(s.rng.IntN(11)) + 0.5)})
	}
	switch s.rng.IntN(4) {
	case 0:
		attrs = append(attrs, match.Attr{Name: "x", Value: match.Int(5)})
	case 1:
		attrs = append(attrs, match.Attr{Name: "x", Value: match.MustFloat(5)})
	case 2:
		attrs = append(attrs, match.Attr{Name: "x", Value: match.Int(6)})
	}
	if s.rng.IntN(2) == 0 {
		attrs = append(attrs, match.Attr{Name: "volume", Value: match.Int(int64(s.rng.IntN(100)))})
	}
	for k := range 8 { // names the wanted sets learn one by one
		if s.rng.IntN(3) == 0 {
			attrs = append(attrs, match.Attr{Name: fmt.Sprintf("t%d", k), Value: match.Bool(true)})
		}
	}
	return match.MustEvent(attrs...)
}

// side returns the routers reachable from j over up links without
// crossing router i.
func (s *meshSim) side(i, j int) []int {
	seen := map[int]bool{i: true, j: true}
	out := []int{j}
	for q := []int{j}; len(q) > 0; q = q[1:] {
		for k, e := range s.edges {
			if s.up[k].a == 0 {
				continue
			}
			for dir := range 2 {
				if e[dir] == q[0] && !seen[e[1-dir]] {
					seen[e[1-dir]] = true
					out = append(out, e[1-dir])
					q = append(q, e[1-dir])
				}
			}
		}
	}
	return out
}

// wants reports whether a subscription of some client of the routers rs
// matches ev.
func (s *meshSim) wants(rs []int, ev match.Event) bool {
	for _, i := range rs {
		for _, cl := range s.routers[i].clients {
			for _, f := range cl.subs {
				if match.MustParse(f).Matches(ev) {
					return true
				}
			}
		}
	}
	return false
}

// checkLinks: link i -> j carried exactly the events published on i's
// side that a subscription on j's side matches.
func (s *meshSim) checkLinks(round int, pubs []simPub) {
	for k, e := range s.edges {
		for dir := range 2 {
			i, j := e[dir], e[1-dir]
			var want []string
			if s.up[k].a != 0 {
				far, near := s.side(i, j), s.side(j, i)
				for _, p := range pubs {
					if slices.Contains(near, p.at) && s.wants(far, p.ev) {
						want = append(want, string(wire.AppendEvent(nil, p.ev)))
					}
				}
			}
			got := slices.Clone(s.sent[[2]int{i, j}])
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				s.t.Fatalf("round %d: link %s -> %s carried %d events, want %d:\n%s", round,
					s.routers[i].name, s.routers[j].name, len(got), len(want), s.describe(got, want))
			}
		}
	}
}

// describe lists the events got and want differ by.
func (s *meshSim) describe(got, want []string) string {
	var b strings.Builder
	for _, raw := range got {
		if !slices.Contains(want, raw) {
			ev, _ := (&wire.EventDecoder{}).DecodeEvent([]byte(raw))
			fmt.Fprintf(&b, "  extra %v\n", ev)
		}
	}
	for _, raw := range want {
		if !slices.Contains(got, raw) {
			ev, _ := (&wire.EventDecoder{}).DecodeEvent([]byte(raw))
			fmt.Fprintf(&b, "  lost  %v\n", ev)
		}
	}
	for _, r := range s.routers {
		for _, cl := range r.clients {
			fmt.Fprintf(&b, "  %s client %d: %v\n", r.name, cl.c.id, cl.subs)
		}
	}
	return b.String()
}

// checkClients: every client of the publisher's part of the mesh got each
// event its subscriptions match once, with exactly those ids.
func (s *meshSim) checkClients(round int, pubs []simPub) {
	for i, r := range s.routers {
		reach := s.side(-1, i)
		for _, cl := range r.clients {
			var want []string
			for _, p := range pubs {
				if !slices.Contains(reach, p.at) {
					continue
				}
				var ids []uint64
				for sub, f := range cl.subs {
					if match.MustParse(f).Matches(p.ev) {
						ids = append(ids, sub)
					}
				}
				if len(ids) > 0 {
					slices.Sort(ids)
					want = append(want, fmt.Sprint(ids, p.ev))
				}
			}
			var got []string
			for _, it := range queuedItems(s.t, cl.c) {
				got = append(got, fmt.Sprint(it.Subs, it.Event))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				s.t.Fatalf("round %d: %s client %d (%v) got\n%q\nwant\n%q", round, r.name, cl.c.id, cl.subs, got, want)
			}
		}
	}
}

// checkInFlight checks what moved during churn: each event crossed an edge
// once at most, one way, and each client got only events that a
// subscription of its (then) matches, once, listing only such ids.
func (s *meshSim) checkInFlight(round int) {
	for k, e := range s.edges {
		seen := map[string]bool{}
		for dir := range 2 {
			for _, raw := range s.sent[[2]int{e[dir], e[1-dir]}] {
				if seen[raw] {
					ev, _ := (&wire.EventDecoder{}).DecodeEvent([]byte(raw))
					s.t.Fatalf("round %d: %v crossed edge %d (%s - %s) twice", round, ev, k, s.routers[e[0]].name, s.routers[e[1]].name)
				}
				seen[raw] = true
			}
		}
	}
	for _, r := range s.routers {
		for _, cl := range r.clients {
			got := map[string]bool{}
			for _, it := range queuedItems(s.t, cl.c) {
				key := string(wire.AppendEvent(nil, it.Event))
				if got[key] {
					s.t.Fatalf("round %d: %s client %d got %v twice", round, r.name, cl.c.id, it.Event)
				}
				got[key] = true
				for _, sub := range it.Subs {
					if f, ok := cl.ever[sub]; !ok || !match.MustParse(f).Matches(it.Event) {
						s.t.Fatalf("round %d: %s client %d got %v for subscription %d (%q)", round, r.name, cl.c.id, it.Event, sub, f)
					}
				}
			}
		}
	}
}
