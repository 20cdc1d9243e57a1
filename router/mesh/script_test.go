package mesh

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/match"
)

// TestMeshScripts runs testdata/mesh*.txt over the in-process simulation.
// Commands:
//
//	routers names=a,b,c [table=poset|forest]
//	link A B              (prints the refusal, if any)
//	unlink A B
//	restart R             (a new run of R; its peers' links to it go stale)
//	sub R client=N        (input: filter; subscription ref 1)
//	unsub R client=N
//	deliver               (every queued message, first queue first, traced)
//	pub R                 (input: one JSON event; who gets it)
//	show R                (links, what is forwarded and held per link)
//
// and, for advertisements (routers ... advertise; advert_script_test.go):
//
//	adv R client=N        (input: filter; advertisement ref 1)
//	unadv R client=N
//	step A B [n=K]        (deliver the first K messages queued from A to B, traced)
func TestMeshScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var s *sim
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "routers" {
				var names, table string
				d.ScanArgs(t, "names", &names)
				if d.HasArg("table") {
					d.ScanArgs(t, "table", &table)
				}
				if d.HasArg("advertise") {
					s = newAdvertSim(t, strings.Split(names, ","), table)
				} else {
					s = newSim(t, strings.Split(names, ","), table)
				}
				return ""
			}
			var b strings.Builder
			s.trace = &b
			runScriptCmd(t, s, d)
			s.trace = nil
			return b.String()
		})
	})
}

func runScriptCmd(t *testing.T, s *sim, d *datadriven.TestData) {
	r := func(i int) int {
		idx, ok := s.byName[d.CmdArgs[i].Key]
		if !ok {
			t.Fatalf("unknown router %q", d.CmdArgs[i].Key)
		}
		return idx
	}
	switch d.Cmd {
	case "link":
		if err := s.connect(r(0), r(1)); err != nil {
			s.logf("refused: %v", err)
		}
	case "unlink":
		for _, c := range s.conns {
			if (c.ends[0].router == r(0) && c.ends[1].router == r(1)) || (c.ends[0].router == r(1) && c.ends[1].router == r(0)) {
				s.disconnect(c)
				return
			}
		}
		t.Fatalf("no link %s-%s", d.CmdArgs[0].Key, d.CmdArgs[1].Key)
	case "restart":
		s.restart(r(0))
	case "sub", "unsub":
		var c int
		d.ScanArgs(t, "client", &c)
		k := subKey{r(0), Client(c), 1}
		if d.Cmd == "unsub" {
			s.unsubscribe(k)
			return
		}
		s.subscribe(k, match.MustParse(strings.TrimSpace(d.Input)))
	case "deliver":
		s.quiesce()
	case "pub":
		e, err := match.ParseEventJSON([]byte(strings.TrimSpace(d.Input)))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range sortedSubs(s.subs) {
			if n := s.publish(r(0), e)[k]; n > 0 {
				s.logf("%s client=%d got it %d time(s)", s.name(k.router), k.client, n)
			}
		}
	case "show":
		show(s, r(0))
	default:
		if !runAdvertCmd(t, s, d, r) {
			t.Fatalf("unknown command %q", d.Cmd)
		}
	}
}

func show(s *sim, r int) {
	m := s.routers[r]
	s.logf("%s: %d subscriptions in the table", m.Name(), m.Len())
	for _, l := range m.Routes() {
		s.logf("  link %s reach=%s unacked=%d", l.Peer, strings.Join(l.Reach, ","), l.Unacked)
		s.logf("    forwarded: %s", strings.Join(l.Forwarded, " | "))
		s.logf("    received: %s", strings.Join(l.Received, " | "))
		if s.adv != nil {
			s.logf("    adverts forwarded: %s", strings.Join(l.AdvertsForwarded, " | "))
			s.logf("    adverts received: %s", strings.Join(l.AdvertsReceived, " | "))
		}
	}
}
