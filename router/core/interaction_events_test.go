package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sift-pubsub/sift/internal/wire"
)

// The event path of the linked cores (interaction_mesh_test.go): what a
// core forwards to a link waits on the link's data FIFO until
// deliver-data sends it, as one batch encoded and decoded as on the wire
// (LinkPublish with its witnesses in exact mode, BloomPublish in Bloom
// mode), to the peer's core.

// publishBatch builds a client's Publish batch from the command's input:
// events as JSON, one a line, each with its encoding as Raw.
func publishBatch(t *testing.T, d *datadriven.TestData, seq uint64) *wire.Publish {
	p := &wire.Publish{Seq: seq}
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		ev := parseEvent(t, d, line)
		p.Events = append(p.Events, ev)
		p.Raw = append(p.Raw, wire.AppendEvent(nil, ev))
	}
	return p
}

// deliverData sends the events waiting on link only, or on every link
// (routers in creation order, their links in id order), one batch per
// link, printing each batch and its effects.
func (e *interactionEnv) deliverData(t *testing.T, only *meshLink) {
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
	for _, l := range ls {
		if len(l.data) == 0 || l.to.links[l.conn] == nil {
			continue
		}
		in := dataBatch(t, l)
		l.data = nil
		fmt.Fprintf(&e.out, "%s -> %s: %s\n", l.from.name, l.to.name, describeBatch(in))
		e.meshStep(l.to, in)
	}
}

// dataBatch encodes link l's waiting events as the batch its writer
// sends and decodes it as the peer's reader does.
func dataBatch(t interface{ Fatalf(string, ...any) }, l *meshLink) Input {
	if l.from.opts.bloom {
		var b wire.BloomBatch
		for _, f := range l.data {
			b.AddEntry(f.Data, f.Witness) // the witness set per link, as the link writer does
		}
		typ, body, _, err := wire.SplitFrame(b.AppendFrame(nil, 0), wire.HardMaxFrame)
		if err != nil {
			t.Fatalf("bloom-publish %s -> %s: %v", l.from.name, l.to.name, err)
		}
		m, err := wire.Decode(typ, body)
		if err != nil {
			t.Fatalf("bloom-publish %s -> %s: %v", l.from.name, l.to.name, err)
		}
		return BloomPublish{Conn: l.conn, Pub: m.(*wire.BloomPublish)}
	}
	var b wire.LinkPublishBatch
	for _, f := range l.data {
		b.AddRaw(f.Data, f.Witness)
	}
	_, body, _, err := wire.SplitFrame(b.Frame(0), wire.HardMaxFrame)
	if err != nil {
		t.Fatalf("link-publish %s -> %s: %v", l.from.name, l.to.name, err)
	}
	var dec wire.EventDecoder
	m, err := dec.DecodeOwnedLinkPublish(slices.Clone(body))
	if err != nil {
		t.Fatalf("link-publish %s -> %s: %v", l.from.name, l.to.name, err)
	}
	return Publish{Conn: l.conn, Pub: &m.Publish, Witness: m.Witness}
}

// describeBatch renders a data batch between routers.
func describeBatch(in Input) string {
	switch in := in.(type) {
	case Publish:
		evs := make([]string, len(in.Pub.Events))
		for i, ev := range in.Pub.Events {
			evs[i] = ev.String()
		}
		return fmt.Sprintf("link-publish witness=%v %s", in.Witness, strings.Join(evs, " "))
	case BloomPublish:
		evs := make([]string, len(in.Pub.Events))
		for i, be := range in.Pub.Events {
			evs[i] = DescribeEvent(be.Event)
			if be.Exact {
				evs[i] = "exact " + evs[i]
			}
			if be.Witness != 0 {
				evs[i] = fmt.Sprintf("witness=%d %s", be.Witness, evs[i])
			}
		}
		return fmt.Sprintf("bloom-publish %s", strings.Join(evs, " "))
	}
	return fmt.Sprintf("%T", in)
}
