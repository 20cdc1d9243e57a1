package router

import (
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/core"
)

// What the shell adds to the core on the event path, checked on real
// matching loops stepped by hand (no QUIC, no goroutines): a link's batch
// is decoded by its reader with the wanted names of that moment and may be
// routed after they grew (the loop decodes it again), and every event and
// frame crosses between routers as the writers and readers carry it:
// staged on the send queues, encoded as a LinkPublish batch, decoded by
// the receiver with its own wanted names, delivered in Deliver frames.
// Which events a mesh of cores delivers and forwards is the core's
// property (router/core's TestLinkedCoresDeliverExactly).

// chainNode is one router of a chain of matching loops.
type chainNode struct {
	name string
	l    *matchLoop
	// left and right are the connections of the links to the neighbours
	// (0: none).
	left, right ifaceID
}

// loopChain is a chain of matching loops linked in a row, r0 - r1 - ...
type loopChain struct {
	t     *testing.T
	nodes []*chainNode
	next  ifaceID // connection ids, unique over the chain
	subs  map[ifaceID]map[uint64]string
}

func newLoopChain(t *testing.T, n int) *loopChain {
	ch := &loopChain{t: t, subs: map[ifaceID]map[uint64]string{}}
	for i := range n {
		cfg := Config{Name: fmt.Sprintf("r%d", i), MaxLinks: 8}
		eng := core.NewEngine(match.NewFast(match.FastConfig{}), 0)
		lk, err := newLinks(cfg, eng)
		if err != nil {
			t.Fatal(err)
		}
		l := &matchLoop{eng: eng, conns: map[ifaceID]*conn{}, metrics: NewMetrics(nil), links: lk}
		l.startWanted()
		ch.nodes = append(ch.nodes, &chainNode{name: cfg.Name, l: l})
	}
	for i := 1; i < n; i++ {
		ch.link(ch.nodes[i-1], ch.nodes[i])
	}
	ch.settle()
	return ch
}

func (ch *loopChain) newConn() *conn {
	ch.next++
	return &conn{id: ch.next, q: newSendQueue(1<<16, 1<<22), log: slog.New(slog.DiscardHandler)}
}

// link brings up the link a - b: each loop takes the other's hello.
func (ch *loopChain) link(a, b *chainNode) {
	ca, cb := ch.newConn(), ch.newConn()
	for _, side := range []struct {
		n     *chainNode
		c     *conn
		hello *wire.LinkHello
	}{{a, ca, b.l.mesh.HelloTo(a.name)}, {b, cb, a.l.mesh.HelloTo(b.name)}} {
		verdict := make(chan error, 1)
		side.n.l.step(loopMsg{in: core.LinkUp{Conn: side.c.id, Hello: side.hello}, conn: side.c, linkErr: verdict})
		if err := <-verdict; err != nil {
			ch.t.Fatalf("link %s - %s: %v", a.name, b.name, err)
		}
	}
	a.right, b.left = ca.id, cb.id
}

// client attaches a client to n.
func (ch *loopChain) client(n *chainNode) *conn {
	c := ch.newConn()
	n.l.step(loopMsg{in: core.Attach{Conn: c.id}, conn: c})
	ch.subs[c.id] = map[uint64]string{}
	return c
}

// subscribe steps a client's Subscribe into n and carries the control
// frames until the chain is quiet.
func (ch *loopChain) subscribe(n *chainNode, c *conn, sub uint64, filter string) {
	n.l.step(coreMsg(core.Subscribe{Conn: c.id, Sub: sub, Filter: filter}))
	ch.subs[c.id][sub] = filter
	ch.settle()
}

// peer returns the node and connection at the other end of link id of
// node i.
func (ch *loopChain) peer(i int, id ifaceID) (*chainNode, ifaceID) {
	if n := ch.nodes[i]; id == n.right {
		return ch.nodes[i+1], ch.nodes[i+1].left
	}
	return ch.nodes[i-1], ch.nodes[i-1].right
}

// settle carries control frames on every link to the peer's loop, as
// LinkFrames decoded from their encoding, until none is queued.
func (ch *loopChain) settle() {
	ch.untilStill("control frames", func(i int, n *chainNode, id ifaceID) bool {
		to, dst := ch.peer(i, id)
		moved := false
		for _, frame := range n.l.conns[id].q.takeControl(nil) {
			moved = true
			typ, body, _, err := wire.SplitFrame(frame, 0)
			if err != nil {
				ch.t.Fatal(err)
			}
			msg, err := wire.Decode(typ, body)
			if err != nil {
				ch.t.Fatalf("%s's control frame %s does not decode: %v", n.name, typ, err)
			}
			to.l.step(coreMsg(core.LinkFrame{Conn: dst, Msg: msg}))
		}
		return moved
	})
}

// readLink takes what node i queued on its link id and decodes it as the
// peer's link data reader does, with the peer's wanted names of now; the
// message is the peer's to step.
func (ch *loopChain) readLink(i int, id ifaceID) (*chainNode, loopMsg, bool) {
	n := ch.nodes[i]
	ds := n.l.conns[id].q.takeData(nil)
	if len(ds) == 0 {
		return nil, loopMsg{}, false
	}
	to, dst := ch.peer(i, id)
	var batch wire.LinkPublishBatch
	for _, d := range ds {
		ch.checkWitness(n, id, d)
		batch.AddRaw(d.raw, d.witness)
	}
	frame := batch.Frame(1)
	var dec wire.EventDecoder
	var ver uint64
	dec.Wanted, ver = to.l.want.load()
	m, err := dec.DecodeOwnedLinkPublish(slices.Clone(frame[wire.HeaderLen+1:]))
	if err != nil {
		ch.t.Fatalf("%s's link-publish batch does not decode: %v", n.name, err)
	}
	return to, loopMsg{in: core.Publish{Conn: dst, Pub: &m.Publish, Witness: m.Witness}, wantVer: ver}, true
}

// checkWitness checks that d's witness names a filter that node n holds
// from link id's peer (its link table) and that the event matches.
func (ch *loopChain) checkWitness(n *chainNode, id ifaceID, d delivery) {
	ev, err := (&wire.EventDecoder{}).DecodeEvent(d.raw)
	if err != nil {
		ch.t.Fatal(err)
	}
	lt := n.l.core.LinkTable()
	var held []string
	for w, fs := range lt.Witnessed(id) {
		for _, f := range fs {
			if wire.FilterHash(f.String()) != w {
				ch.t.Fatalf("%s link %d: filter %s held under witness %x, its own is %x", n.name, id, f, w, wire.FilterHash(f.String()))
			}
			if w == d.witness && f.Matches(ev) {
				return
			}
			held = append(held, f.String())
		}
	}
	slices.Sort(held)
	ch.t.Fatalf("%s forwards %v on link %d with witness %x: no filter it holds from there that the event matches (%v)",
		n.name, ev, id, d.witness, held)
}

// carryData steps every link's queued batches into the peers, decoded
// with the peers' wanted names at the time, until nothing is queued.
func (ch *loopChain) carryData() {
	ch.untilStill("data batches", func(i int, _ *chainNode, id ifaceID) bool {
		to, m, ok := ch.readLink(i, id)
		if ok {
			to.l.step(m)
		}
		return ok
	})
}

// untilStill calls move on every link end of every node (its index, the
// node, the link's interface) until no call moves anything.
func (ch *loopChain) untilStill(what string, move func(i int, n *chainNode, id ifaceID) bool) {
	for range 100 {
		moved := false
		for i, n := range ch.nodes {
			for _, id := range []ifaceID{n.left, n.right} {
				if id != 0 && move(i, n, id) {
					moved = true
				}
			}
		}
		if !moved {
			return
		}
	}
	ch.t.Fatalf("%s still move on the chain's links after 100 rounds", what)
}

// checkDelivered checks that each client got ev exactly once with
// exactly its subscriptions that match it (brute force over ch.subs),
// decoded in full from its Deliver frames, and nothing else.
func (ch *loopChain) checkDelivered(clients []*conn, ev match.Event) {
	for _, c := range clients {
		var want []uint64
		for sub, f := range ch.subs[c.id] {
			if match.MustParse(f).Matches(ev) {
				want = append(want, sub)
			}
		}
		slices.Sort(want)
		got := queuedItems(ch.t, c)
		switch {
		case len(want) == 0 && len(got) == 0:
		case len(want) == 0 || len(got) != 1:
			ch.t.Fatalf("client %d: deliveries %+v, want %v", c.id, got, want)
		case !slices.Equal(slices.Sorted(slices.Values(got[0].Subs)), want) || !got[0].Event.Equal(ev):
			ch.t.Fatalf("client %d: got %v for %v, want %v for %v", c.id, got[0].Event, got[0].Subs, ev, want)
		}
	}
}

// TestLinkBatchDecodedBeforeNamesGrewIsRoutedOnThem: a LinkPublish batch
// that r1's link reader decoded while no filter named `late` is routed
// after a subscription on `late` reached r1, from its own client or from
// r2 beyond it. The loop decodes it again: the event reaches the new
// subscription (through r1's link table and r2's loop, with its witness,
// for r2's), with every attribute, and every other client gets exactly
// what brute force says. Without the second decoding r1 sees the event
// without `late` and the new subscription misses it.
func TestLinkBatchDecodedBeforeNamesGrewIsRoutedOnThem(t *testing.T) {
	for _, at := range []int{1, 2} {
		t.Run(fmt.Sprintf("late subscriber at r%d", at), func(t *testing.T) {
			ch := newLoopChain(t, 3)
			r0, r1 := ch.nodes[0], ch.nodes[1]
			pub, c1, late := ch.client(r0), ch.client(r1), ch.client(ch.nodes[at])
			ch.subscribe(r1, c1, 1, `price < 5`)
			ev := match.MustEvent(
				match.Attr{Name: "late", Value: match.Bool(true)},
				match.Attr{Name: "price", Value: match.Int(3)},
				match.Attr{Name: "symbol", Value: match.Str("XX")},
			)
			r0.l.step(readBatchFrom(r0.l, pub.id, ev))
			to, batch, ok := ch.readLink(0, r0.right)
			if !ok || to != r1 {
				t.Fatal("r0 forwarded nothing to r1")
			}
			if got := batch.in.(core.Publish).Pub.Events[0]; got.Len() != 1 {
				t.Fatalf("decoded at r1 under {price}: %v, want only price", got)
			}
			ch.subscribe(ch.nodes[at], late, 1, `late == true`)
			if !r1.l.want.stale(batch.wantVer) {
				t.Fatalf("r1's wanted names did not grow with the subscription on late at r%d", at)
			}
			r1.l.step(batch)
			ch.carryData()
			ch.checkDelivered([]*conn{pub, c1, late}, ev)
		})
	}
}

// readBatchFrom does what client iface's data reader does: decode a
// Publish body with the loop's current wanted names and stamp the
// message with their version.
func readBatchFrom(l *matchLoop, iface ifaceID, evs ...match.Event) loopMsg {
	m := readBatch(l, evs...)
	in := m.in.(core.Publish)
	in.Conn = iface
	m.in = in
	return m
}
