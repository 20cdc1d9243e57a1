package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// The link table commands of TestInteraction (what exact forwarding
// decides per event):
//
//	linktable                      (a new, empty link table)
//	routes link=N seq=N [snapshot] (input: "+ filter" or "- filter" lines; a Routes into the table)
//	forward from=N [witness]       (input: a JSON event, then optionally the witnessed filter; the links it goes to)
var linkTableCommands = map[string]bool{"linktable": true, "routes": true, "forward": true}

// decisionNames name what decided a link table's answer.
var decisionNames = [...]string{
	DecidedByIndex: "index", DecidedByWitness: "witness", DecidedByCache: "cache", DecidedNoLinks: "no-links",
}

func (e *interactionEnv) handleLinkTable(t *testing.T, d *datadriven.TestData) {
	num := func(key string) uint64 {
		var n uint64
		d.ScanArgs(t, key, &n)
		return n
	}
	if d.Cmd == "linktable" {
		e.lt = NewLinkTable()
		return
	}
	if e.lt == nil {
		d.Fatalf(t, "%s before linktable", d.Cmd)
	}
	switch d.Cmd {
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
		if err := e.lt.Apply(ConnID(num("link")), r); err != nil {
			fmt.Fprintf(&e.out, "error: %v\n", err)
		}
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
