package core

import (
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
)

// TestInteraction runs the scripts in testdata/interaction/ against a core driven as
// router's matching loop drives it. Every command prints the effects
// (DescribeReady) and the pending deadline. Commands:
//
//	core [nomesh] [rto=off|trust|verify|majority] [clients=N] [vector=N] [timeout=D]
//	                          (nomesh: a router that takes no links)
//	                          (input: FF's fixed filters, one a line)
//	offer conn=N [rto] [ff]   (AssistOffer)
//	claim conn=N sub=N        (FFClaim, honest; input: the filter)
//	subscribe conn=N sub=N    (Subscribe; input: the filter; the client is
//	                           attached first if it is not)
//	answer conn=N [lie]       (RTOAnswer to every query conn has not answered)
//	unsubscribe conn=N sub=N  (Unsubscribe)
//	detach conn=N             (Detach)
//	bad conn=N                (a client frame the core does not take)
//	tick D                    (the clock moves on by D; the core is ticked)
//	crash                     (the router restarts: a new core over a new mesh, same settings;
//	                           the clock goes on, clients must offer and subscribe again)
//
// and the link table commands of interaction_linktable_test.go and the
// linked routers' commands of interaction_mesh_test.go. (The
// engine has its own scripts, testdata/engine.txt, run by
// TestEngineScripts.)
func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata/interaction", func(t *testing.T, path string) {
		e := newInteractionEnv(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			e.out.Reset()
			e.handle(t, d)
			return e.out.String()
		})
	})
}

func (e *interactionEnv) handle(t *testing.T, d *datadriven.TestData) {
	if linkTableCommands[d.Cmd] {
		e.handleLinkTable(t, d) // interaction_linktable_test.go
		return
	}
	if isMeshCmd(d) {
		e.handleMesh(t, d) // interaction_mesh_test.go
		return
	}
	if d.Cmd != "core" && e.core == nil {
		d.Fatalf(t, "%s before core", d.Cmd)
	}
	conn := func() ConnID {
		var n uint64
		d.ScanArgs(t, "conn", &n)
		return ConnID(n)
	}
	sub := func() uint64 {
		var n uint64
		d.ScanArgs(t, "sub", &n)
		return n
	}
	filter := func() match.Filter {
		f, err := match.Parse(strings.TrimSpace(d.Input))
		if err != nil {
			d.Fatalf(t, "filter: %v", err)
		}
		return f
	}
	switch d.Cmd {
	case "core":
		e.handleCore(t, d)
	case "offer":
		var modes uint8
		if d.HasArg("rto") {
			modes |= wire.AssistRTO
		}
		if d.HasArg("ff") {
			modes |= wire.AssistFF
		}
		e.step(ClientFrame{Conn: conn(), Msg: &wire.AssistOffer{Modes: modes}})
	case "claim":
		c, s, f := conn(), sub(), filter()
		e.step(ClientFrame{Conn: c, Msg: &wire.FFClaim{Gen: 1, Sub: s, Covering: poset.FixedCovering(e.fixed, f)}})
	case "subscribe":
		c, s := conn(), sub()
		e.client(c)
		e.step(Subscribe{Conn: c, Sub: s, Filter: strings.TrimSpace(d.Input)})
	case "answer":
		c := conn()
		qs := e.queries[c]
		delete(e.queries, c)
		for _, q := range qs {
			e.step(ClientFrame{Conn: c, Msg: answer(t, q, d.HasArg("lie"))})
		}
	case "unsubscribe":
		e.step(Unsubscribe{Conn: conn(), Sub: sub()})
	case "detach":
		c := conn()
		delete(e.queries, c)
		delete(e.attached, c)
		e.step(Detach{Conn: c})
	case "bad":
		e.step(ClientFrame{Conn: conn(), Msg: &wire.Ack{About: wire.TypeSubscribe, ID: 1}})
	case "crash":
		c, err := newMeshCore("a", e.set)
		if err != nil {
			d.Fatalf(t, "crash: %v", err)
		}
		e.core, e.attached = c, nil
		e.queries = make(map[ConnID][]*wire.RTOQuery)
	case "tick":
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			d.Fatalf(t, "tick: %v", err)
		}
		e.now = e.now.Add(dur)
		e.core.Tick(e.now)
		e.carry()
	default:
		d.Fatalf(t, "unknown command %s", d.Cmd)
	}
}

func (e *interactionEnv) handleCore(t *testing.T, d *datadriven.TestData) {
	set := AssistSettings{FF: poset.Verify, Timeout: 2 * time.Second, RTO: poset.RTOConfig{VectorSize: 64, Clients: 1}}
	for _, a := range d.CmdArgs {
		var err error
		switch a.Key {
		case "rto":
			var p poset.Policy
			if p, err = poset.ParsePolicy(a.Vals[0]); err == nil {
				set.On, set.RTO.Policy = true, p
				if p == poset.Trust {
					set.FF = p
				}
			}
		case "clients":
			d.ScanArgs(t, "clients", &set.RTO.Clients)
		case "vector":
			d.ScanArgs(t, "vector", &set.RTO.VectorSize)
		case "timeout":
			set.Timeout, err = time.ParseDuration(a.Vals[0])
		}
		if err != nil {
			d.Fatalf(t, "core %s: %v", a.Key, err)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if line == "" {
			continue
		}
		f, err := match.Parse(line)
		if err != nil {
			d.Fatalf(t, "fixed filter: %v", err)
		}
		set.Fixed = append(set.Fixed, f)
	}
	c, err := newMeshCore("a", set)
	if d.HasArg("nomesh") {
		c, err = New(Config{Engine: NewEngine(match.NewFast(match.FastConfig{}), 0)})
	}
	if err != nil {
		d.Fatalf(t, "core: %v", err)
	}
	e.core, e.fixed, e.set, e.now, e.attached = c, set.Fixed, set, epoch, nil
	e.queries = make(map[ConnID][]*wire.RTOQuery)
}
