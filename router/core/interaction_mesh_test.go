package core

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router/bloomfwd"
	"github.com/sift-pubsub/sift/router/mesh"
)

// Several routers' cores linked through their Readys: the frames a core
// produces for a link are queued, encoded, on that link's FIFO and
// delivered to the peer's core as LinkFrame, as router's matching loops
// and QUIC do. Commands (router=NAME picks a router; without it the
// commands of interaction_test.go act on the single core):
//
//	router name=X [bloom [m=N]] [advertise] [merge]
//	                       (a router: mesh, MaxLinks 4; Bloom mode k=2, m=256 unless given)
//	restart name=X         (X restarts: a new core, a new incarnation, no links; its
//	                        peers still hold their old links to it)
//	link X Y               (X dials Y: Y takes X's hello and answers, X takes Y's hello)
//	unlink X Y             (the link goes down at both ends; what was queued on it is lost)
//	deliver [X Y] [n=N]    (deliver the frames queued from X to Y, or on every link in
//	                        turn, until none is left, or N of them; each with its effects)
//	subscribe router=X conn=N sub=N   (input: the filter; attaches the client first if needed)
//	subscribe-batch router=X conn=N first=N  (input: the filters, one a line)
//	unsubscribe router=X conn=N sub=N
//	advertise router=X conn=N id=N    (input: the filter; advertise mode)
//	unadvertise router=X conn=N id=N
//	detach router=X conn=N
//	frame router=X from=Y|conn=N
//	                       (a control message as if Y sent it on the link; input: its
//	                        rendering, "bloom-terms add=TERM..." or "routes-ack gen=G seq=S")
//	dict                   (every Bloom router's dictionary terms)
//	mesh-routes router=X   (the routes X holds per link)
//	route router=X [from=N]  (the links X's link table forwards an event to, never
//	                        back to connection N; input: the event, JSON)
//	publish router=X conn=N seq=S  (client N publishes a batch; input: its events,
//	                        JSON, one a line; attaches the client first if needed)
//	deliver-data [X Y]     (the events forwarded on link X -> Y, or on every link in
//	                        turn, as one LinkPublish or BloomPublish batch each)
//
// Client connections are numbered by the script; link connections from
// 100, per router, in the order the links come up. Effects print as
// "X: <effect>"; a frame on a link names the peer: "frame conn=100 (->Y)".
// A link a core closes goes down at the peer too (its connection drops).

type meshRouter struct {
	name        string
	core        *Core
	opts        routerOpts
	incarnation uint64
	next        ConnID               // the next link connection id
	links       map[ConnID]*meshLink // this router's link connections
	peers       map[string]ConnID    // peer name -> link connection here
	clients     map[ConnID]bool      // client connections attached (when they first subscribe)
}

// routerOpts are a scripted router's settings.
type routerOpts struct {
	bloom, advertise, merge bool
	m                       uint // Bloom's filter width (0: 256)
}

// newMeshRouterCore returns a router's core over a fresh mesh.
func newMeshRouterCore(name string, o routerOpts, incarnation uint64) (*Core, error) {
	cfg := Config{}
	if o.bloom {
		cfg.Bloom = &bloomfwd.Config{Params: bloom.Params{M: cmp.Or(o.m, 256), K: 2}}
	}
	m, err := mesh.New(mesh.Config{Name: name, MaxLinks: 4, Incarnation: incarnation, Advertise: o.advertise, Merge: o.merge})
	if err != nil {
		return nil, err
	}
	cfg.Mesh, cfg.Engine = m, NewEngine(match.NewFast(match.FastConfig{}), 0)
	return New(cfg)
}

// meshLink is one direction of a link: frames from one router to
// another, in order.
type meshLink struct {
	from, to *meshRouter
	conn     ConnID // the link's connection at to
	q        [][]byte
	data     []Forward // events forwarded, not yet delivered (interaction_events_test.go)
}

// isMeshCmd reports whether the command is one of this file's.
func isMeshCmd(d *datadriven.TestData) bool {
	switch d.Cmd {
	case "router", "restart", "link", "unlink", "deliver", "dict", "mesh-routes", "frame", "route", "deliver-data":
		return true
	case "subscribe", "subscribe-batch", "unsubscribe", "detach", "advertise", "unadvertise", "publish":
		return d.HasArg("router")
	}
	return false
}

func (e *interactionEnv) handleMesh(t *testing.T, d *datadriven.TestData) {
	if e.routers == nil {
		e.routers = map[string]*meshRouter{}
	}
	arg := func(key string) uint64 {
		var n uint64
		d.ScanArgs(t, key, &n)
		return n
	}
	pick := func(key string) *meshRouter {
		var name string
		d.ScanArgs(t, key, &name)
		r := e.routers[name]
		if r == nil {
			d.Fatalf(t, "no router %s", name)
		}
		return r
	}
	pair := func() (*meshRouter, *meshRouter) {
		if len(d.CmdArgs) < 2 {
			d.Fatalf(t, "%s: want two routers", d.Cmd)
		}
		x, y := e.routers[d.CmdArgs[0].Key], e.routers[d.CmdArgs[1].Key]
		if x == nil || y == nil {
			d.Fatalf(t, "%s: no router %s or %s", d.Cmd, d.CmdArgs[0].Key, d.CmdArgs[1].Key)
		}
		return x, y
	}
	switch d.Cmd {
	case "router":
		var name string
		d.ScanArgs(t, "name", &name)
		opts := routerOpts{bloom: d.HasArg("bloom"), advertise: d.HasArg("advertise"), merge: d.HasArg("merge")}
		if d.HasArg("m") {
			opts.m = uint(arg("m"))
		}
		c, err := newMeshRouterCore(name, opts, 1)
		if err != nil {
			d.Fatalf(t, "router: %v", err)
		}
		e.routers[name] = &meshRouter{name: name, core: c, opts: opts, incarnation: 1, next: 100, links: map[ConnID]*meshLink{}, peers: map[string]ConnID{}, clients: map[ConnID]bool{}}
		e.order = append(e.order, name)
	case "restart":
		r := pick("name")
		r.incarnation++
		c, err := newMeshRouterCore(r.name, r.opts, r.incarnation)
		if err != nil {
			d.Fatalf(t, "restart: %v", err)
		}
		r.core, r.links, r.peers, r.clients = c, map[ConnID]*meshLink{}, map[string]ConnID{}, map[ConnID]bool{}
	case "link":
		x, y := pair()
		e.link(t, d, x, y)
	case "unlink":
		x, y := pair()
		for _, end := range [][2]*meshRouter{{x, y}, {y, x}} {
			r, peer := end[0], end[1]
			id, ok := r.peers[peer.name]
			if !ok {
				d.Fatalf(t, "unlink: %s has no link to %s", r.name, peer.name)
			}
			delete(r.peers, peer.name)
			delete(r.links, id)
			e.meshStep(r, Detach{Conn: id})
		}
	case "deliver":
		n := -1
		if d.HasArg("n") {
			n = int(arg("n"))
		}
		var only *meshLink
		if len(d.CmdArgs) >= 2 && d.CmdArgs[1].Vals == nil {
			x, y := pair()
			only = e.linkFrom(x, y)
			if only == nil {
				d.Fatalf(t, "deliver: no link %s -> %s", x.name, y.name)
			}
		}
		e.deliver(t, only, n)
	case "subscribe":
		r, id := pick("router"), ConnID(arg("conn"))
		if !r.clients[id] {
			r.clients[id] = true
			e.meshStep(r, Attach{Conn: id})
		}
		e.meshStep(r, Subscribe{Conn: id, Sub: arg("sub"), Filter: strings.TrimSpace(d.Input)})
	case "subscribe-batch":
		r, id := pick("router"), ConnID(arg("conn"))
		if !r.clients[id] {
			r.clients[id] = true
			e.meshStep(r, Attach{Conn: id})
		}
		var fs []match.Filter
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f, err := match.Parse(line)
			if err != nil {
				d.Fatalf(t, "subscribe-batch: %v", err)
			}
			fs = append(fs, f)
		}
		e.meshStep(r, SubscribeBatch{Conn: id, First: arg("first"), Filters: fs})
	case "unsubscribe":
		e.meshStep(pick("router"), Unsubscribe{Conn: ConnID(arg("conn")), Sub: arg("sub")})
	case "advertise":
		r, id := pick("router"), ConnID(arg("conn"))
		if !r.clients[id] {
			r.clients[id] = true
			e.meshStep(r, Attach{Conn: id})
		}
		e.meshStep(r, Advertise{Conn: id, ID: arg("id"), Filter: strings.TrimSpace(d.Input)})
	case "unadvertise":
		e.meshStep(pick("router"), Unadvertise{Conn: ConnID(arg("conn")), ID: arg("id")})
	case "detach":
		r := pick("router")
		id := ConnID(arg("conn"))
		if l := r.links[id]; l != nil {
			d.Fatalf(t, "detach: conn %d is a link (use unlink)", id)
		}
		delete(r.clients, id)
		e.meshStep(r, Detach{Conn: id})
	case "frame":
		r := pick("router")
		var id ConnID
		if d.HasArg("conn") {
			id = ConnID(arg("conn"))
		} else {
			from := pick("from")
			var ok bool
			if id, ok = r.peers[from.name]; !ok {
				d.Fatalf(t, "frame: %s has no link to %s", r.name, from.name)
			}
		}
		e.meshStep(r, LinkFrame{Conn: id, Msg: parseFrame(t, d)})
	case "dict":
		for _, name := range e.order {
			if dict := e.routers[name].core.BloomDict(); dict != nil {
				fmt.Fprintf(&e.out, "%s: %q\n", name, dict.Terms())
			}
		}
	case "route":
		r := pick("router")
		ev := parseEvent(t, d, strings.TrimSpace(d.Input))
		var from ConnID
		if d.HasArg("from") {
			from = ConnID(arg("from"))
		}
		lt := r.core.LinkTable()
		if lt == nil {
			fmt.Fprintf(&e.out, "%s: no link table\n", r.name)
			return
		}
		hits, decided := lt.Route(from, ev, 0)
		for _, h := range hits {
			fmt.Fprintf(&e.out, "%s: link conn=%d (->%s)\n", r.name, h.Link, r.links[h.Link].to.name)
		}
		fmt.Fprintf(&e.out, "%s: decided by %s\n", r.name, decisionNames[decided])
	case "publish":
		r, id := pick("router"), ConnID(arg("conn"))
		if !r.clients[id] {
			r.clients[id] = true
			e.meshStep(r, Attach{Conn: id})
		}
		e.meshStep(r, Publish{Conn: id, Pub: publishBatch(t, d, arg("seq"))})
	case "deliver-data":
		var only *meshLink
		if len(d.CmdArgs) >= 2 {
			x, y := pair()
			if only = e.linkFrom(x, y); only == nil {
				d.Fatalf(t, "deliver-data: no link %s -> %s", x.name, y.name)
			}
		}
		e.deliverData(t, only)
	case "mesh-routes":
		r := pick("router")
		for _, lr := range r.core.mesh.Routes() {
			fmt.Fprintf(&e.out, "%s: link %s: %+v\n", r.name, lr.Peer, lr)
		}
	}
}

// link brings a link up the way two routers do: x dials and sends its
// hello; y takes it (LinkUp, answering with its own hello, then its
// snapshots); x reads y's hello, the first frame on the link, and takes it.
func (e *interactionEnv) link(t *testing.T, d *datadriven.TestData, x, y *meshRouter) {
	if _, dup := x.peers[y.name]; dup {
		d.Fatalf(t, "link: %s - %s is up", x.name, y.name)
	}
	cx, cy := x.next, y.next
	x.next++
	y.next++
	x.peers[y.name], y.peers[x.name] = cx, cy
	x.links[cx] = &meshLink{from: x, to: y, conn: cy}
	y.links[cy] = &meshLink{from: y, to: x, conn: cx}
	if err := e.meshStep(y, LinkUp{Conn: cy, Hello: x.core.Hello(), SendHello: true}); err != nil {
		delete(x.peers, y.name)
		delete(y.peers, x.name)
		delete(x.links, cx)
		delete(y.links, cy)
		return
	}
	back := y.links[cy]
	if len(back.q) == 0 {
		d.Fatalf(t, "link: %s sent no hello", y.name)
	}
	m := decodeFrame(t, back.q[0])
	back.q = back.q[1:]
	h, ok := m.(*wire.LinkHello)
	if !ok {
		d.Fatalf(t, "link: %s's first frame is %s, want its hello", y.name, DescribeMessage(m))
	}
	fmt.Fprintf(&e.out, "%s -> %s: %s\n", y.name, x.name, DescribeMessage(h))
	e.meshStep(x, LinkUp{Conn: cx, Hello: h})
}

// linkFrom returns the direction x -> y of their link.
func (e *interactionEnv) linkFrom(x, y *meshRouter) *meshLink {
	id, ok := x.peers[y.name]
	if !ok {
		return nil
	}
	return x.links[id]
}

// deliver delivers up to n frames (n < 0: until none is left) on link
// only, or on every link in turn (routers in creation order, their links
// in id order, one frame each per turn).
func (e *interactionEnv) deliver(t *testing.T, only *meshLink, n int) {
	for n != 0 {
		var ls []*meshLink
		if only != nil {
			ls = []*meshLink{only}
		} else {
			for _, name := range e.order {
				r := e.routers[name]
				for _, id := range slices.Sorted(maps.Keys(r.links)) {
					ls = append(ls, r.links[id])
				}
			}
		}
		moved := false
		for _, l := range ls {
			if n == 0 || len(l.q) == 0 || l.to.links[l.conn] == nil {
				continue
			}
			m := decodeFrame(t, l.q[0])
			l.q = l.q[1:]
			fmt.Fprintf(&e.out, "%s -> %s: %s\n", l.from.name, l.to.name, DescribeMessage(m))
			e.meshStep(l.to, LinkFrame{Conn: l.conn, Msg: m})
			moved = true
			n--
		}
		if !moved {
			return
		}
	}
}

// meshStep steps r's core with in at the env's clock and carries out
// its Readys: frames for links onto their FIFOs, every effect printed.
func (e *interactionEnv) meshStep(r *meshRouter, in Input) error {
	r.core.Tick(e.now)
	err := r.core.Step(in)
	if err != nil {
		fmt.Fprintf(&e.out, "%s: error: %v\n", r.name, err)
	}
	for r.core.HasReady() {
		rd := r.core.Ready()
		for _, line := range strings.Split(strings.TrimSuffix(e.describeFor(r, rd), "\n"), "\n") {
			if line != "" {
				fmt.Fprintf(&e.out, "%s: %s\n", r.name, line)
			}
		}
		for _, f := range rd.Frames {
			if l := r.links[f.Conn]; l != nil {
				l.q = append(l.q, f.Data)
			}
		}
		for _, f := range rd.Forwards {
			if l := r.links[f.Conn]; l != nil {
				l.data = append(l.data, Forward{Conn: f.Conn, Data: slices.Clone(f.Data), Witness: f.Witness})
			}
		}
		var closed []*meshLink
		for _, c := range rd.Close {
			if l := r.links[c.Conn]; l != nil {
				delete(r.links, c.Conn)
				delete(r.peers, l.to.name)
				closed = append(closed, l)
			}
		}
		r.core.Advance()
		for _, l := range closed {
			e.dropped(l)
		}
	}
	return err
}

// dropped is the transport's part of a close: the peer's end of the link
// goes down too (Detach there), and what was queued either way is lost.
func (e *interactionEnv) dropped(l *meshLink) {
	peer, id := l.to, l.conn
	if back := peer.links[id]; back == nil || back.to != l.from {
		return // gone already (or the peer restarted)
	}
	delete(peer.peers, l.from.name)
	delete(peer.links, id)
	fmt.Fprintf(&e.out, "%s: link to %s closed by its peer\n", peer.name, l.from.name)
	e.meshStep(peer, Detach{Conn: id})
}

// describeFor is DescribeReady with each link frame naming its peer.
func (e *interactionEnv) describeFor(r *meshRouter, rd Ready) string {
	s := DescribeReady(rd)
	for id, l := range r.links {
		s = strings.ReplaceAll(s, fmt.Sprintf("frame conn=%d:", id), fmt.Sprintf("frame conn=%d (->%s):", id, l.to.name))
	}
	return s
}

func decodeFrame(t interface{ Fatalf(string, ...any) }, data []byte) wire.Message {
	typ, body, _, err := wire.SplitFrame(data, wire.HardMaxFrame)
	if err != nil {
		t.Fatalf("core sent a bad frame: %v", err)
	}
	m, err := wire.Decode(typ, body)
	if err != nil {
		t.Fatalf("core sent an undecodable %s: %v", typ, err)
	}
	return m
}

// parseFrame reads the message of a frame command: "bloom-terms
// [remove=C,...] [add=C,...]" (constraints without qualifier) or
// "routes-ack gen=G seq=S".
func parseFrame(t *testing.T, d *datadriven.TestData) wire.Message {
	fields := strings.Fields(strings.TrimSpace(d.Input))
	if len(fields) == 0 {
		d.Fatalf(t, "frame: no message")
	}
	kv := map[string]string{}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	terms := func(s string) []wire.BloomTerm {
		var out []wire.BloomTerm
		for _, c := range strings.Split(s, ",") {
			if c != "" {
				out = append(out, wire.BloomTerm{C: strings.ReplaceAll(c, "_", " ")})
			}
		}
		return out
	}
	switch fields[0] {
	case "bloom-terms":
		return &wire.BloomTerms{Remove: terms(kv["remove"]), Add: terms(kv["add"])}
	case "routes-ack":
		var gen, seq uint64
		fmt.Sscan(kv["gen"], &gen)
		fmt.Sscan(kv["seq"], &seq)
		return &wire.RoutesAck{Gen: gen, Seq: seq}
	}
	d.Fatalf(t, "frame: unknown message %s", fields[0])
	return nil
}
