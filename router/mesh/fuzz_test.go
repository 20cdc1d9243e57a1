package mesh

import (
	"testing"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
)

// FuzzReceive feeds arbitrary frames to a router on a link: decoding or
// Receive may refuse them, but never panic, and a refusal changes neither
// the routing table nor what the link holds. Accepted input keeps the
// table consistent with what the link holds.
func FuzzReceive(f *testing.F) {
	for _, m := range []wire.Message{
		&wire.Routes{Gen: 1, Seq: 2, Add: []string{"x>1", "x > 1"}},
		&wire.Routes{Gen: 1, Seq: 2, Remove: []string{"x < 3"}, Add: []string{`s == "a"`}},
		&wire.Routes{Gen: 1, Seq: 2, Snapshot: true, Add: []string{"x < 3", "x<3"}},
		&wire.Routes{Gen: 1, Seq: 2},
		&wire.RoutesAck{Gen: 1, Seq: 1},
		&wire.Reach{Names: []string{"b", "c"}},
	} {
		f.Add(wire.AppendFrame(nil, m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newSim(t, []string{"a", "b"}, "")
		if err := s.connect(0, 1); err != nil {
			t.Fatal(err)
		}
		s.subscribe(subKey{1, 1, 1}, match.MustParse("x < 3"))
		s.quiesce()
		a := s.routers[0]
		l := a.sortedLinks()[0]
		typ, body, _, err := wire.SplitFrame(data, 1<<16)
		if err != nil {
			return
		}
		msg, err := wire.Decode(typ, body)
		if err != nil {
			return
		}
		before, held := a.table.Structure(), l.received
		if _, err := a.Receive(l.id, msg); err != nil {
			if a.table.Structure() != before || l.received != held {
				t.Fatalf("refused %s changed the state: %v", describe(msg), err)
			}
			return
		}
		if a.links[l.id] == nil {
			return // closed (a cycle claimed by Reach)
		}
		n := 0
		for _, h := range a.table.HeldBy(l.slot) {
			n += h.N
		}
		if n != l.received {
			t.Fatalf("link holds %d filters, counts %d", n, l.received)
		}
		for _, rt := range a.Routes() {
			if rt.Link == l.id && len(rt.Received) != n {
				t.Fatalf("link holds %d filters, view says %d", n, len(rt.Received))
			}
		}
	})
}
