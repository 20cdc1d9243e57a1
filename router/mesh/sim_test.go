package mesh

import (
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// fataler is what the simulation needs of *testing.T and *rapid.T.
type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// sim runs several Meshes in one process, linked by in-memory FIFO
// connections that carry every message through the wire encoding. There
// are no sockets, goroutines or clocks: the test decides which message is
// delivered next.
type sim struct {
	t       fataler
	routers []*Mesh
	byName  map[string]int
	conns   []*conn
	subs    map[subKey]match.Filter // live client subscriptions
	ready   map[subKey]bool
	topo    int            // bumped on every link change
	subTopo map[subKey]int // topo when each subscription was made, -1 if unsettled
	trace   *strings.Builder
	noCheck bool // benchmarks: skip checkInstalled on Ready
	table   string
	runs    int            // routers started or restarted: each run's incarnation
	adv     *advertSim     // advertisements on (advert_sim_test.go); nil: off
	batches map[subKey]int // batches awaiting Ready, by first subscription: their sizes
	part    int            // the routers' Config.SnapshotPart (0: the default)
}

type subKey struct {
	router int
	client Client
	ref    uint64
}

type end struct {
	router int
	link   Link
}

// conn is a link between two routers: q[0] flows toward ends[0], q[1]
// toward ends[1].
type conn struct {
	ends [2]end
	q    [2][]wire.Message
	// dialling: ends[0] dialled and has not had the answer yet
	// (cycle_property_test.go); what flows toward it waits.
	dialling bool
}

// simSnapshotPart is the Config.SnapshotPart of newPartsSim's routers:
// about one filter, so that every snapshot streams and every Routes larger
// than one filter goes in parts (snapstream.go, sendParts).
const simSnapshotPart = 16

// newSim returns a simulation of routers named names with the default
// Config.SnapshotPart (the scripts' messages are whole).
func newSim(t fataler, names []string, table string) *sim {
	return newSimPart(t, names, table, 0)
}

// newPartsSim is newSim with routers that send in parts of simSnapshotPart
// bytes, two parts of a snapshot in flight: the random tests run on it.
func newPartsSim(t fataler, names []string, table string) *sim {
	return newSimPart(t, names, table, simSnapshotPart)
}

func newSimPart(t fataler, names []string, table string, part int) *sim {
	s := &sim{t: t, byName: map[string]int{}, subs: map[subKey]match.Filter{},
		ready: map[subKey]bool{}, subTopo: map[subKey]int{}, table: table, part: part}
	for i, n := range names {
		s.routers = append(s.routers, s.start(n))
		s.byName[n] = i
	}
	return s
}

// start returns a new Mesh named n with an incarnation of its own.
func (s *sim) start(n string) *Mesh {
	s.runs++
	table, merge := strings.CutSuffix(s.table, "+merge") // "poset+merge": perfect merging on
	m, err := New(Config{Name: n, Table: table, Merge: merge, MaxLinks: 4, Incarnation: uint64(s.runs), Advertise: s.adv != nil,
		SnapshotPart: s.part, SnapshotWindow: 2})
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

// restart replaces router r by a new run, as after a crash: its clients
// and the messages in flight on its links are gone, and its peers keep
// their (now stale) links until they learn otherwise. The dead run's end
// of each connection is link 0: what reaches it is lost.
func (s *sim) restart(r int) {
	s.routers[r] = s.start(s.name(r))
	s.topo++
	for _, c := range s.conns {
		for k := range c.ends {
			if c.ends[k].router == r {
				c.ends[k].link = 0
				c.q = [2][]wire.Message{}
			}
		}
	}
	for k := range s.subs {
		if k.router == r {
			delete(s.subs, k)
			delete(s.ready, k)
		}
	}
	s.advertRestart(r)
}

func (s *sim) logf(format string, args ...any) {
	if s.trace != nil {
		fmt.Fprintf(s.trace, format+"\n", args...)
	}
}

func (s *sim) name(i int) string { return s.routers[i].Name() }

// connect links router i (dialling) to j (accepting) as routers do: i's
// hello, j's Accept and answer, i's LinkUp on the answer; either may
// refuse.
func (s *sim) connect(i, j int) error {
	hi := s.routers[i].HelloTo(s.name(j))
	lj, answer, oj, err := s.routers[j].Accept(roundTrip(s.t, hi).(*wire.LinkHello))
	if err != nil {
		return err
	}
	li, oi, err := s.routers[i].LinkUp(roundTrip(s.t, answer).(*wire.LinkHello))
	if err != nil {
		s.dispatch(j, s.routers[j].LinkDown(lj))
		return err
	}
	s.topo++
	s.conns = append(s.conns, &conn{ends: [2]end{{i, li}, {j, lj}}})
	s.dispatch(i, oi)
	s.dispatch(j, oj)
	return nil
}

// disconnect drops connection c: in-flight messages are lost and both
// sides see the link go down.
func (s *sim) disconnect(c *conn) {
	s.conns = slices.DeleteFunc(s.conns, func(o *conn) bool { return o == c })
	s.topo++
	for _, e := range c.ends {
		s.dispatch(e.router, s.routers[e.router].LinkDown(e.link))
	}
}

func (s *sim) find(r int, l Link) (*conn, int) {
	for _, c := range s.conns {
		for k, e := range c.ends {
			if e.router == r && e.link == l {
				return c, k
			}
		}
	}
	return nil, 0
}

func (s *sim) dispatch(r int, out Output) {
	for _, sd := range out.Sends {
		c, k := s.find(r, sd.Link)
		if c == nil {
			s.t.Fatalf("%s sent on link %d, which is not connected", s.name(r), sd.Link)
		}
		c.q[1-k] = append(c.q[1-k], sd.Msg)
	}
	for _, rd := range out.Ready {
		if rd.Advert {
			s.advertReady(r, rd)
			continue
		}
		if rd.Batch {
			s.batchReady(r, rd) // batch_test.go
			continue
		}
		k := subKey{r, rd.Client, rd.Ref}
		s.logf("ready %s client=%d ref=%d", s.name(r), rd.Client, rd.Ref)
		if _, live := s.subs[k]; !live {
			s.t.Fatalf("%s: Ready for client %d ref %d, which is not subscribed", s.name(r), rd.Client, rd.Ref)
		}
		if s.ready[k] {
			s.t.Fatalf("%s: Ready twice for client %d ref %d", s.name(r), rd.Client, rd.Ref)
		}
		s.ready[k] = true
		if s.subTopo[k] == s.topo && !s.noCheck {
			s.checkInstalled(k)
		}
	}
	for _, cl := range out.Close {
		s.logf("close %s: %s", s.name(r), cl.Reason)
		if c, _ := s.find(r, cl.Link); c != nil {
			s.disconnect(c)
		}
	}
}

// settle times out the stale links (as the idle timeout or a stateless
// reset would), delivers everything and checks the quiet state.
func (s *sim) settle() {
	for _, c := range slices.Clone(s.conns) {
		if c.ends[0].link == 0 || c.ends[1].link == 0 {
			s.disconnect(c)
		}
	}
	s.quiesce()
	s.checkQuiet()
}

// deliver hands the first message queued toward end k of c to its router.
func (s *sim) deliver(c *conn, k int) {
	msg := c.q[k][0]
	c.q[k] = c.q[k][1:]
	e := c.ends[k]
	if e.link == 0 {
		s.logf("%s -> %s: %s (lost: that run of %[2]s is gone)", s.name(c.ends[1-k].router), s.name(e.router), describe(msg))
		return
	}
	s.logf("%s -> %s: %s", s.name(c.ends[1-k].router), s.name(e.router), describe(msg))
	s.noteAdverts(e, msg)
	out, err := s.routers[e.router].Receive(e.link, roundTrip(s.t, msg))
	if err != nil {
		s.t.Fatalf("%s: %v", s.name(e.router), err)
	}
	s.dispatch(e.router, out)
}

// queued returns the (connection, direction) pairs with messages waiting.
func (s *sim) queued() [][2]int {
	var out [][2]int
	for i, c := range s.conns {
		for k := range c.q {
			if len(c.q[k]) > 0 && (k != 0 || !c.dialling) {
				out = append(out, [2]int{i, k})
			}
		}
	}
	return out
}

// quiesce delivers messages, first queue first, until none is left.
func (s *sim) quiesce() {
	for n := 0; ; n++ {
		q := s.queued()
		if len(q) == 0 {
			return
		}
		if n > 100_000 {
			s.t.Fatal("messages never stop")
		}
		s.deliver(s.conns[q[0][0]], q[0][1])
	}
}

func (s *sim) subscribe(k subKey, f match.Filter) {
	out, err := s.routers[k.router].Subscribe(k.client, k.ref, f)
	if err != nil {
		s.t.Fatal(err)
	}
	s.subs[k] = f
	s.subTopo[k] = s.topo
	s.dispatch(k.router, out)
}

func (s *sim) unsubscribe(k subKey) {
	out, err := s.routers[k.router].Unsubscribe(k.client, k.ref, s.subs[k])
	if err != nil {
		s.t.Fatal(err)
	}
	delete(s.subs, k)
	delete(s.ready, k)
	s.dispatch(k.router, out)
}

// checkRouteCounts checks that router i's RouteCounts gives the lengths
// of its Routes lists and nothing else differs.
func (s *sim) checkRouteCounts(i int) {
	full, counts := s.routers[i].Routes(), s.routers[i].RouteCounts()
	if len(full) != len(counts) {
		s.t.Fatalf("%s: %d links in Routes, %d in RouteCounts", s.name(i), len(full), len(counts))
	}
	for j, lr := range full {
		c := counts[j]
		if c.ForwardedCount != len(lr.Forwarded) || c.ReceivedCount != len(lr.Received) || c.Forwarded != nil || c.Received != nil {
			s.t.Fatalf("%s link %d: counts %d/%d (lists %v/%v), Routes has %d/%d", s.name(i), lr.Link, c.ForwardedCount, c.ReceivedCount, c.Forwarded, c.Received, len(lr.Forwarded), len(lr.Received))
		}
		lr.Forwarded, lr.Received = nil, nil
		if !reflect.DeepEqual(lr, c) {
			s.t.Fatalf("%s link %d: RouteCounts %+v, Routes %+v", s.name(i), lr.Link, c, lr)
		}
	}
}

// clientSubs yields the subscriptions of client c at router r, in ref
// order: what a caller hands DropClient.
func (s *sim) clientSubs(r int, c Client) iter.Seq2[uint64, match.Filter] {
	var refs []uint64
	for k := range s.subs {
		if k.router == r && k.client == c {
			refs = append(refs, k.ref)
		}
	}
	slices.Sort(refs)
	return func(yield func(uint64, match.Filter) bool) {
		for _, ref := range refs {
			if !yield(ref, s.subs[subKey{r, c, ref}]) {
				return
			}
		}
	}
}

// publish routes e hop by hop from router p over the routers' current
// tables and returns how many times each subscription got it.
func (s *sim) publish(p int, e match.Event) map[subKey]int {
	got := map[subKey]int{}
	type visit struct {
		router int
		from   Link
	}
	todo := []visit{{p, 0}}
	for steps := 0; len(todo) > 0; steps++ {
		if steps > 10*len(s.routers) {
			s.t.Fatalf("event %s loops", e)
		}
		v := todo[0]
		todo = todo[1:]
		links, clients := s.routers[v.router].Route(e, v.from)
		for _, c := range clients {
			for k, f := range s.subs {
				if k.router == v.router && k.client == c && f.Matches(e) {
					got[k]++
				}
			}
		}
		for _, l := range links {
			c, k := s.find(v.router, l)
			if c == nil {
				s.t.Fatalf("%s routes to link %d, which is not connected", s.name(v.router), l)
			}
			if c.ends[1-k].link == 0 {
				continue // a stale link: that run of the router is gone
			}
			todo = append(todo, visit{c.ends[1-k].router, c.ends[1-k].link})
		}
	}
	return got
}

// components labels each router with its connected component; a cycle
// in the links is fatal.
func (s *sim) components() []int {
	comp, cycle := s.tryComponents()
	if cycle != "" {
		s.t.Fatalf("the links form a cycle through %s", cycle)
	}
	return comp
}

// tryComponents labels each router with its connected component, or names
// a link that closes a cycle.
func (s *sim) tryComponents() ([]int, string) {
	comp := make([]int, len(s.routers))
	for i := range comp {
		comp[i] = i
	}
	find := func(i int) int {
		for comp[i] != i {
			i = comp[i]
		}
		return i
	}
	for _, c := range s.conns {
		if c.ends[0].link == 0 || c.ends[1].link == 0 {
			continue // stale: carries nothing
		}
		a, b := find(c.ends[0].router), find(c.ends[1].router)
		if a == b {
			return nil, s.name(c.ends[0].router) + "-" + s.name(c.ends[1].router)
		}
		comp[a] = b
	}
	for i := range comp {
		comp[i] = find(i)
	}
	return comp, ""
}

// checkInstalled checks that subscription k, just Ready, gets every
// matching grid event published at any router of its component.
func (s *sim) checkInstalled(k subKey) {
	comp, cycle := s.tryComponents()
	if cycle != "" {
		return // racing links not yet broken: nothing is promised
	}
	for p := range s.routers {
		if comp[p] != comp[k.router] {
			continue
		}
		for _, e := range gridEvents {
			if s.subs[k].Matches(e) && s.conforms(p, e, true) && s.publish(p, e)[k] == 0 {
				s.t.Fatalf("ready %v (%s) but %s published at %s misses it", k, s.subs[k], e, s.name(p))
			}
		}
	}
}

// checkQuiet checks, with no message in flight: the links form a forest,
// every subscription is ready, every grid event published anywhere reaches
// exactly the matching subscriptions of its component once, and with no
// subscription left every table is empty.
func (s *sim) checkQuiet() {
	comp := s.components()
	for k := range s.subs {
		if !s.ready[k] {
			s.t.Fatalf("subscription %v (%s) never became ready", k, s.subs[k])
		}
	}
	for i, m := range s.routers {
		if n := m.pendingCount(); n != 0 {
			s.t.Fatalf("%s: %d acknowledgements still owed when quiet", s.name(i), n)
		}
		s.checkRouteCounts(i)
	}
	for p := range s.routers {
		for _, e := range gridEvents {
			if !s.conforms(p, e, false) {
				continue // refused at p: it matches no advertisement there
			}
			got := s.publish(p, e)
			for k, f := range s.subs {
				want := 0
				if comp[k.router] == comp[p] && f.Matches(e) {
					want = 1
				}
				if got[k] != want {
					s.t.Fatalf("%s published at %s: %v (%s) got it %d times, want %d", e, s.name(p), k, f, got[k], want)
				}
			}
		}
	}
	s.checkAdvertsQuiet()
	if len(s.subs) == 0 {
		for _, m := range s.routers {
			if m.Len() != 0 {
				s.t.Fatalf("no subscription left but %s's table holds %d", m.Name(), m.Len())
			}
		}
	}
}

// gridEvents covers every combination of the attributes the test filters
// use.
var gridEvents = func() []match.Event {
	var out []match.Event
	for x := range 8 {
		for _, sym := range []string{"a", "b", "c"} {
			out = append(out, match.MustEvent(match.Attr{Name: "s", Value: match.Str(sym)}, match.Attr{Name: "x", Value: match.Int(int64(x))}))
		}
	}
	return out
}()

// roundTrip encodes and decodes m, so the simulation exercises the codec.
func roundTrip(t fataler, m wire.Message) wire.Message {
	typ, body, _, err := wire.SplitFrame(wire.AppendFrame(nil, m), wire.HardMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	out, err := wire.Decode(typ, body)
	if err != nil {
		t.Fatalf("decode %s: %v", typ, err)
	}
	return out
}

// describe renders a link message for traces.
func describe(m wire.Message) string {
	switch m := m.(type) {
	case *wire.Routes:
		var b strings.Builder
		fmt.Fprintf(&b, "routes seq=%d", m.Seq)
		if m.Snapshot {
			b.WriteString(" snapshot")
		}
		for _, f := range m.Remove {
			b.WriteString(" -(" + f + ")")
		}
		for _, f := range m.Add {
			b.WriteString(" +(" + f + ")")
		}
		return b.String()
	case *wire.RoutesAck:
		return fmt.Sprintf("ack seq=%d", m.Seq)
	case *wire.Adverts:
		return describeAdverts(m)
	case *wire.Reach:
		return "reach " + strings.Join(m.Names, ",")
	}
	return m.Type().String()
}
