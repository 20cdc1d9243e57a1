package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// The engine and link table commands of TestInteraction (the per-event
// routing the matching loop does with them):
//
//	engine [max=N]                 (a new engine over match.Fast; N subscriptions per conn)
//	attach conn=N [link]           (a client, or a link)
//	detach-engine conn=N
//	subscribe conn=N sub=N         (input: the filter)
//	unsubscribe-engine conn=N sub=N
//	route from=N                   (input: a JSON event; the interfaces and subscriptions it goes to)
//	routes link=N seq=N [snapshot] (input: "+ filter" or "- filter" lines; a Routes into the link table)
//	forward from=N [witness]       (input: a JSON event, then optionally the witnessed filter; the links it goes to)
var engineCommands = map[string]bool{
	"engine": true, "attach": true, "detach-engine": true, "subscribe": true,
	"unsubscribe-engine": true, "route": true, "routes": true, "forward": true,
}

// decisionNames name what decided a link table's answer.
var decisionNames = [...]string{
	DecidedByIndex: "index", DecidedByWitness: "witness", DecidedByCache: "cache", DecidedNoLinks: "no-links",
}

func (e *interactionEnv) handleEngine(t *testing.T, d *datadriven.TestData) {
	num := func(key string) uint64 {
		var n uint64
		d.ScanArgs(t, key, &n)
		return n
	}
	report := func(err error) {
		if err != nil {
			fmt.Fprintf(&e.out, "error: %v\n", err)
		}
	}
	if d.Cmd == "engine" {
		max := 0
		if d.HasArg("max") {
			d.ScanArgs(t, "max", &max)
		}
		e.eng, e.lt = NewEngine(match.NewFast(match.FastConfig{}), max), NewLinkTable()
		return
	}
	if e.eng == nil {
		d.Fatalf(t, "%s before engine", d.Cmd)
	}
	switch d.Cmd {
	case "attach":
		kind := KindClient
		if d.HasArg("link") {
			kind = KindNeighbour
		}
		report(e.eng.Attach(ConnID(num("conn")), kind))
	case "detach-engine":
		fmt.Fprintf(&e.out, "%d subscriptions dropped\n", e.eng.Detach(ConnID(num("conn"))))
	case "subscribe":
		report(e.eng.Subscribe(ConnID(num("conn")), num("sub"), strings.TrimSpace(d.Input)))
	case "unsubscribe-engine":
		report(e.eng.Unsubscribe(ConnID(num("conn")), num("sub")))
	case "route":
		ev := parseEvent(t, d, strings.TrimSpace(d.Input))
		hits := e.eng.Route(ConnID(num("from")), ev)
		if len(hits) == 0 {
			e.out.WriteString("no interface\n")
		}
		for _, h := range hits {
			fmt.Fprintf(&e.out, "conn=%d subs=%v\n", h.Iface, h.Subs)
		}
	case "routes":
		r := &wire.Routes{Gen: 1, Seq: num("seq"), Snapshot: d.HasArg("snapshot")}
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			switch op, f, _ := strings.Cut(strings.TrimSpace(line), " "); op {
			case "+":
				r.Add = append(r.Add, f)
			case "-":
				r.Remove = append(r.Remove, f)
			case "":
			default:
				d.Fatalf(t, "routes: line %q is not + or - and a filter", line)
			}
		}
		report(e.lt.Apply(ConnID(num("link")), r))
	case "forward":
		lines := strings.SplitN(strings.TrimSpace(d.Input), "\n", 2)
		ev := parseEvent(t, d, lines[0])
		var witness uint64
		if d.HasArg("witness") {
			if len(lines) < 2 {
				d.Fatalf(t, "forward witness: no witnessed filter after the event")
			}
			f, err := match.Parse(strings.TrimSpace(lines[1]))
			if err != nil {
				d.Fatalf(t, "forward witness: %v", err)
			}
			witness = wire.FilterHash(f.String())
		}
		hits, decided := e.lt.Route(ConnID(num("from")), ev, witness)
		for _, h := range hits {
			w := "none"
			if h.Witness != 0 {
				w = fmt.Sprintf("%x", h.Witness)
			}
			fmt.Fprintf(&e.out, "link=%d witness=%s\n", h.Link, w)
		}
		fmt.Fprintf(&e.out, "decided by %s\n", decisionNames[decided])
	}
}

func parseEvent(t *testing.T, d *datadriven.TestData, text string) match.Event {
	ev, err := match.ParseEventJSON([]byte(text))
	if err != nil {
		d.Fatalf(t, "event: %v", err)
	}
	return ev
}
