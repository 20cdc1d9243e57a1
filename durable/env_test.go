package durable

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/match"
)

// env wires one pubend "p" at node "phb", optionally a router "r" (or a
// chain of routers "r1" - "r2" - ..., r1 nearest the PHB), and an SHB
// "shb" with a reliable FIFO network, for datadriven scenarios. Nothing
// is held back from a Ready (ProgressHold -1): the scenarios show every
// write's effect at once; idle_test.go tests the holding. Node
// names starting with "s" followed by a digit are subscribers, "pub"
// publishers; their messages are printed.
type env struct {
	t       envT
	now     Tick
	phb     *Pubend
	routers map[string]*Router
	rnames  []string // the router chain, from the PHB down
	rincs   map[string]uint64
	shbs    map[string]*SHB
	shbSts  map[string]*mapStore
	// twins are the reference SHBs (SHB.stepAll: every catching session
	// stepped after every input), each stepped beside its SHB with the same
	// inputs on a store of its own: every Ready, error and stat must be
	// the same (a differential test of the SHB's selective stepping, in
	// every scenario).
	twins   map[string]*SHB
	twinSts map[string]*mapStore
	// client, if set, sees every message to a subscriber or publisher.
	client func(Envelope)
	snames []string // "shb", then "shb2", ...
	phbSt  *mapStore
	queue  []Envelope
	drops  map[MsgKind]int // drop the next n messages of a kind
	trace  bool
	down   map[string]bool // nodes that are down: no timers, messages to them lost
	opts   envOpts
}

// envOpts are the options of the "new" command.
type envOpts struct {
	routers, shbs int  // a chain of routers ("r", or "r1", "r2", ...) and SHBs below it
	maxRetain     Tick // the PHB's MaxRetain (0: no early release)
	dedupExpiry   Tick
	dropAfter     Tick
	idleSilence   Tick // the PHB's IdleSilenceInterval; 1 (the scripts' default) keeps 10 ms throughout
	subQueue      int  // the SHBs' SubQueue (0: the default)
	tailSize      int  // the SHBs' TailSize (0: the default)
	window        int  // the SHBs' CatchupWindow (0: the default)
	noTwin        bool // no reference SHB beside each (see env.twins)
}

// newEnv builds an env: a PHB, a chain of routers, SHBs below the last.
// envT is what an env needs of its test: a *testing.T or a *rapid.T.
type envT interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func newEnv(t envT, o envOpts) *env {
	e := &env{t: t, phbSt: newMapStore(), shbs: map[string]*SHB{}, shbSts: map[string]*mapStore{},
		twins: map[string]*SHB{}, twinSts: map[string]*mapStore{},
		drops: map[MsgKind]int{}, opts: o,
		routers: map[string]*Router{}, rincs: map[string]uint64{}, down: map[string]bool{}}
	nRouters := o.routers
	for i := range max(o.shbs, 1) {
		name := "shb"
		if i > 0 {
			name = fmt.Sprintf("shb%d", i+1)
		}
		e.snames = append(e.snames, name)
		e.shbSts[name] = newMapStore()
		e.twinSts[name] = newMapStore()
	}
	for i := range nRouters {
		name := "r"
		if nRouters > 1 {
			name = fmt.Sprintf("r%d", i+1)
		}
		e.rnames = append(e.rnames, name)
	}
	e.bootPHB()
	for _, name := range e.rnames {
		e.bootRouter(name)
	}
	for _, name := range e.snames {
		e.bootSHB(name)
	}
	return e
}

// neighbours returns the node above a node of the chain PHB, routers...,
// and the nodes below it: the next router, or every SHB below the last.
func (e *env) neighbours(name string) (up string, down []string) {
	c := append([]string{"phb"}, e.rnames...)
	for i, n := range c {
		if n == name {
			if i > 0 {
				up = c[i-1]
			}
			if i+1 < len(c) {
				return up, []string{c[i+1]}
			}
			return up, e.snames
		}
	}
	return c[len(c)-1], nil // an SHB
}

func (e *env) bootPHB() {
	_, down := e.neighbours("phb")
	p, err := NewPubend(PubendConfig{ID: "p", Node: "phb", Downstream: down,
		SHBs: e.snames, MaxRetain: e.opts.maxRetain, DedupExpiry: e.opts.dedupExpiry, DropAfter: e.opts.dropAfter,
		IdleSilenceInterval: e.opts.idleSilence, ProgressHold: -1}, e.phbSt)
	if err != nil {
		e.t.Fatal(err)
	}
	e.phb = p
}

func (e *env) bootRouter(name string) {
	e.rincs[name]++
	up, down := e.neighbours(name)
	r, err := NewRouter(RouterConfig{Node: name, Upstream: map[string]string{"p": up},
		Downstream: down, Incarnation: e.rincs[name]})
	if err != nil {
		e.t.Fatal(err)
	}
	e.routers[name] = r
}

func (e *env) bootSHB(name string) {
	up, _ := e.neighbours(name)
	cfg := SHBConfig{Node: name, Upstream: up, Pubends: []string{"p"}, SubQueue: e.opts.subQueue,
		TailSize: e.opts.tailSize, CatchupWindow: e.opts.window, ProgressHold: -1}
	s, err := NewSHB(cfg, e.shbSts[name])
	if err != nil {
		e.t.Fatal(err)
	}
	e.shbs[name] = s
	delete(e.twins, name)
	if !e.opts.noTwin {
		twin, err := NewSHB(cfg, e.twinSts[name])
		if err != nil {
			e.t.Fatal(err)
		}
		twin.stepAll = true
		e.twins[name] = twin
	}
	if err := e.stepSHB(name, func(*SHB) error { return nil }); err != nil {
		e.t.Fatal(err)
	}
}

// stepSHB applies f (a Step or Tick) to SHB name and flushes its Ready,
// and does the same to its twin, if any: the two must return the same
// error, Ready and stats, or the test fails.
func (e *env) stepSHB(name string, f func(*SHB) error) error {
	s, twin := e.shbs[name], e.twins[name]
	err := f(s)
	rd := s.Ready()
	if twin != nil {
		terr := f(twin)
		trd := twin.Ready()
		if fmt.Sprint(err) != fmt.Sprint(terr) {
			e.t.Fatalf("%s at %d: error %v, the reference's %v", name, e.now, err, terr)
		}
		if !reflect.DeepEqual(rd.Msgs, trd.Msgs) || !reflect.DeepEqual(rd.Writes, trd.Writes) || rd.Sync != trd.Sync {
			e.t.Fatalf("%s at %d: Ready differs from the reference's:\n%s\nreference:\n%s", name, e.now, describeReady(rd), describeReady(trd))
		}
		st, tst := s.Stats, twin.Stats
		st.CatchupSteps, tst.CatchupSteps = 0, 0
		if st != tst {
			e.t.Fatalf("%s at %d: stats %+v, the reference's %+v", name, e.now, st, tst)
		}
		if !trd.Writes.Empty() {
			if err := e.twinSts[name].Apply(trd.Writes, trd.Sync); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	e.flush(rd, e.shbSts[name])
	return err
}

// describeReady renders a Ready's messages and writes, one a line.
func describeReady(rd Ready) string {
	var b strings.Builder
	for _, env := range rd.Msgs {
		fmt.Fprintf(&b, "  %v\n", env)
	}
	if rd.Writes != nil {
		for _, op := range rd.Writes.Ops {
			fmt.Fprintf(&b, "  write %d %x=%x %x\n", op.Kind, op.Key, op.Value, op.End)
		}
	}
	return b.String()
}

func (e *env) flush(rd Ready, st *mapStore) {
	if st != nil && !rd.Writes.Empty() {
		if err := st.Apply(rd.Writes, rd.Sync); err != nil {
			e.t.Fatal(err)
		}
	}
	e.queue = append(e.queue, rd.Msgs...)
}

// deliver runs the network until no message is left, returning what the
// clients received (and everything, when tracing).
func (e *env) deliver() string {
	var b strings.Builder
	for len(e.queue) > 0 {
		e.deliverOne(&b)
	}
	return b.String()
}

// deliverOne delivers the first queued message, writing what a client
// received (and everything, when tracing) to b.
func (e *env) deliverOne(b *strings.Builder) {
	env := e.queue[0]
	e.queue = e.queue[1:]
	if e.down[env.To] {
		fmt.Fprintf(b, "lost (%s is down) %v\n", env.To, env)
		return
	}
	if e.drops[env.Msg.Kind] > 0 {
		e.drops[env.Msg.Kind]--
		fmt.Fprintf(b, "dropped %v\n", env)
		return
	}
	var err error
	switch env.To {
	case "phb":
		err = e.phb.Step(e.now, env)
		e.flush(e.phb.Ready(), e.phbSt)
	default:
		if _, ok := e.shbs[env.To]; ok {
			err = e.stepSHB(env.To, func(s *SHB) error { return s.Step(e.now, env) })
			break
		}
		r, ok := e.routers[env.To]
		if !ok {
			if e.client != nil {
				e.client(env)
			}
			fmt.Fprintf(b, "%v\n", env)
			return
		}
		err = r.Step(e.now, env)
		e.flush(r.Ready(), nil)
	}
	if err != nil {
		fmt.Fprintf(b, "error: %v\n", err)
	}
	if e.trace {
		fmt.Fprintf(b, "  %v\n", env)
	}
}

func (e *env) tick() {
	e.phb.Tick(e.now)
	e.flush(e.phb.Ready(), e.phbSt)
	for _, name := range e.rnames {
		e.routers[name].Tick(e.now)
		e.flush(e.routers[name].Ready(), nil)
	}
	for _, name := range e.snames {
		if e.down[name] {
			continue
		}
		if err := e.stepSHB(name, func(s *SHB) error { return s.Tick(e.now) }); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) state() string {
	var b strings.Builder
	var logTicks []Tick
	_ = e.phbSt.Scan(PHBLogPrefix("p"), prefixEnd(PHBLogPrefix("p")), func(k, v []byte) bool {
		n, _ := keyNumOf(k)
		logTicks = append(logTicks, Tick(n))
		return true
	})
	fmt.Fprintf(&b, "phb: announced=%d lost=%d log=%v", e.phb.LastAnnounced(), e.phb.Lost(), logTicks)
	if d := e.phb.Dropped(); len(d) > 0 {
		fmt.Fprintf(&b, " dropped=%v", d)
	}
	b.WriteByte('\n')
	for _, name := range e.snames {
		e.shbState(&b, name)
	}
	return b.String()
}

func (e *env) shbState(b *strings.Builder, name string) {
	sh := e.shbs[name]
	pb := sh.pubs["p"]
	fmt.Fprintf(b, "%s: ld=%d lost=%d pfs=%d records (lastTimestamp=%d)\n", name, pb.ld, pb.lost, pb.pfs.records(), pb.pfs.lastTS)
	for _, d := range sh.sortedSubs() {
		mode := "disconnected"
		if c, ok := sh.conns[d.id]; ok {
			mode = "up-to-date"
			if c.streams["p"].catchup != nil {
				mode = "catching up"
			}
			mode += fmt.Sprintf(" pos=%d", c.streams["p"].pos)
			if q := c.streams["p"].unacked; len(q) > 0 {
				mode += fmt.Sprintf(" unacked=%v", q)
			}
		}
		if d.roamed {
			mode += " roamed"
		}
		fmt.Fprintf(b, "  %s: start=%d released=%d %s\n", d.id, d.start["p"], d.released["p"], mode)
	}
}

// TestScenarios runs the datadriven broker scenarios in testdata/scenarios.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		var e *env
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return e.handle(t, d, &e)
		})
	})
}

func (e *env) handle(t *testing.T, d *datadriven.TestData, ep **env) string {
	switch d.Cmd {
	case "new":
		o := envOpts{idleSilence: 1}
		ticks := map[string]*Tick{"max-retain": &o.maxRetain, "dedup-expiry": &o.dedupExpiry,
			"drop-after": &o.dropAfter, "idle-silence": &o.idleSilence}
		for key, v := range ticks {
			var n int64
			if d.HasArg(key) {
				d.ScanArgs(t, key, &n)
				*v = Tick(n)
			}
		}
		d.MaybeScanArgs(t, "shbs", &o.shbs)
		d.MaybeScanArgs(t, "queue", &o.subQueue)
		d.MaybeScanArgs(t, "routers", &o.routers)
		if d.HasArg("router") {
			o.routers = 1
		}
		*ep = newEnv(t, o)
		return ""
	case "trace":
		e.trace = !e.trace
		return fmt.Sprintf("trace=%v", e.trace)
	case "time":
		var now int64
		d.ScanArgs(t, "t", &now)
		e.now = Tick(now)
		e.tick()
		return e.deliver()
	case "publish":
		var seq int
		var pub string
		d.ScanArgs(t, "pub", &pub)
		d.ScanArgs(t, "seq", &seq)
		ev, err := match.ParseEventJSON([]byte(strings.TrimSpace(d.Input)))
		if err != nil {
			return err.Error()
		}
		e.queue = append(e.queue, Envelope{From: pub, To: "phb", Msg: Msg{Kind: MsgPublish, Publisher: pub, Seq: uint64(seq), Event: ev}})
		return e.deliver()
	case "hello":
		pub := argStr(t, d, "pub")
		e.queue = append(e.queue, Envelope{From: pub, To: "phb", Msg: Msg{Kind: MsgHello, Publisher: pub}})
		return e.deliver()
	case "resume", "ack", "disconnect", "unsubscribe":
		at := "shb"
		d.MaybeScanArgs(t, "at", &at)
		e.queue = append(e.queue, Envelope{From: argStr(t, d, "sub"), To: at, Msg: clientMsg(t, d)})
		return e.deliver()
	case "drop":
		var kind string
		var n int
		d.ScanArgs(t, "kind", &kind)
		d.ScanArgs(t, "n", &n)
		for k := MsgKind(1); k <= MsgUninstall; k++ {
			if k.String() == kind {
				e.drops[k] = n
			}
		}
		return ""
	case "down":
		e.down[argStr(t, d, "node")] = true
		return ""
	case "restart":
		delete(e.down, argStr(t, d, "node"))
		switch node := argStr(t, d, "node"); {
		case node == "phb":
			e.bootPHB()
		case e.shbs[node] != nil:
			e.bootSHB(node)
		default:
			e.bootRouter(node)
		}
		return e.deliver()
	case "state":
		return e.state()
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return ""
}

func argStr(t *testing.T, d *datadriven.TestData, key string) string {
	var s string
	d.ScanArgs(t, key, &s)
	return s
}

// clientMsg builds a subscriber's message from the command's arguments:
// sub=, session=, filter= (the input text), ct=N (pubend p).
func clientMsg(t *testing.T, d *datadriven.TestData) Msg {
	m := Msg{Sub: argStr(t, d, "sub"), Session: 1}
	if d.HasArg("session") {
		var s int
		d.ScanArgs(t, "session", &s)
		m.Session = uint64(s)
	}
	if d.HasArg("ct") {
		n, err := strconv.ParseInt(argStr(t, d, "ct"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		m.HasCT, m.CT = true, CT{"p": Tick(n)}
	}
	switch d.Cmd {
	case "resume":
		m.Kind = MsgResume
		text := strings.TrimSpace(d.Input)
		if text == "" {
			text = "*"
		}
		f, err := match.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		m.Filter = f
	case "ack":
		m.Kind = MsgAck
	case "disconnect":
		m.Kind = MsgDisconnect
	case "unsubscribe":
		m.Kind = MsgUnsubscribe
	}
	return m
}
