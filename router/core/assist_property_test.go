package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
	"github.com/sift-pubsub/sift/router/mesh"
	"pgregory.net/rapid"
)

// propertyFilters are the filters the RTO property places.
var propertyFilters = []string{
	`symbol == "IBM"`, `symbol == "IBM" && price < 50`, `price > 100`, `price > 10`,
	`symbol == "HP" && price > 200`, `volume >= 1000`, `symbol == "IBM" && volume >= 1000`,
	`price < 5`, `symbol exists`,
}

// TestAssistProperty drives the core with random interleavings of offers,
// placements, honest and lying answers, unsubscriptions, departures and
// ticks, under every RTO policy, and checks what the driver relies on:
// every placement still wanted becomes Ready exactly once (at the latest
// when the clock passes its deadline and answers stop), never one that
// was unsubscribed; a deadline is pending exactly while the mesh waits for
// answers; queries go only to connections that offered and are still
// there; and once everything is Ready the mesh holds no placement.
func TestAssistProperty(t *testing.T) {
	for _, policy := range []string{"trust", "verify", "majority"} {
		t.Run(policy, func(t *testing.T) {
			var seen propertyCounts
			rapid.Check(t, func(rt *rapid.T) { runAssistProperty(rt, policy, &seen) })
			t.Logf("%+v", seen)
			if seen.queries == 0 || seen.timeouts == 0 || seen.placedRTO+seen.fallbacks == 0 {
				t.Fatalf("weak test: the runs sent %d queries, timed out %d rounds, ended %d RTO placements", seen.queries, seen.timeouts, seen.placedRTO+seen.fallbacks)
			}
		})
	}
}

// propertyCounts says what the runs of the property exercised.
type propertyCounts struct{ queries, timeouts, placedRTO, fallbacks int }

type placed struct {
	conn ConnID
	sub  uint64
}

func runAssistProperty(rt *rapid.T, policyName string, seen *propertyCounts) {
	policy, err := poset.ParsePolicy(policyName)
	if err != nil {
		rt.Fatal(err)
	}
	clients := 1
	if policy == poset.Majority {
		clients = 2
	}
	set := AssistSettings{On: true, FF: poset.Verify, Timeout: 100 * time.Millisecond,
		RTO: poset.RTOConfig{Policy: policy, VectorSize: rapid.IntRange(1, 4).Draw(rt, "vector"), Clients: clients}}
	c, err := newMeshCore("a", set)
	if err != nil {
		rt.Fatal(err)
	}
	now := epoch
	offered := map[ConnID]bool{}             // assistants offering, not gone
	queries := map[ConnID][]*wire.RTOQuery{} // sent, not yet answered
	want := map[placed]bool{}                // placed, not Ready, not removed
	ready := map[placed]bool{}               // Ready once
	nextSub := map[ConnID]uint64{}
	carry := func() {
		for c.HasReady() {
			rd := c.Ready()
			for _, f := range rd.Frames {
				t, body, _, err := wire.SplitFrame(f.Data, wire.HardMaxFrame)
				if err != nil {
					rt.Fatal(err)
				}
				m, err := wire.Decode(t, body)
				if err != nil {
					rt.Fatal(err)
				}
				if ack, ok := m.(*wire.Ack); ok && ack.About == wire.TypeSubscribe {
					p := placed{f.Conn, ack.ID}
					if ready[p] {
						rt.Fatalf("subscription %v Ready twice", p)
					}
					if !want[p] {
						rt.Fatalf("subscription %v Ready but not wanted (unsubscribed or never placed)", p)
					}
					ready[p], want[p] = true, false
					delete(want, p)
					continue
				}
				q, ok := m.(*wire.RTOQuery)
				if !ok {
					rt.Fatalf("unexpected frame %s", DescribeMessage(m))
				}
				if !offered[f.Conn] {
					rt.Fatalf("query sent to conn %d, which did not offer or is gone", f.Conn)
				}
				queries[f.Conn] = append(queries[f.Conn], q)
				seen.queries++
			}
			for _, m := range rd.Metrics {
				switch m.Kind {
				case PlacedRTO:
					seen.placedRTO++
				case FallbackRTO:
					seen.fallbacks++
				}
			}
			c.Advance()
		}
		_, pending := c.Deadline()
		waiting := false
		for p := range want {
			waiting = waiting || c.mesh.Placing(mesh.Client(p.conn), p.sub)
		}
		if pending != waiting {
			rt.Fatalf("deadline pending %v, mesh waiting for answers %v", pending, waiting)
		}
	}
	step := func(in Input) {
		c.Tick(now)
		if err := c.Step(in); err != nil {
			rt.Fatalf("step %T: %v", in, err)
		}
		carry()
	}
	answerAll := func(a ConnID, lie bool) {
		qs := queries[a]
		delete(queries, a)
		for _, q := range qs {
			m := answer(rt, q, lie)
			step(ClientFrame{Conn: a, Msg: m})
		}
	}
	for cl := ConnID(1); cl <= 3; cl++ {
		step(Attach{Conn: cl})
	}
	n := rapid.IntRange(1, 60).Draw(rt, "steps")
	for range n {
		switch rapid.IntRange(0, 6).Draw(rt, "action") {
		case 0:
			a := ConnID(rapid.IntRange(10, 12).Draw(rt, "assistant"))
			offered[a] = true
			step(ClientFrame{Conn: a, Msg: &wire.AssistOffer{Modes: wire.AssistRTO}})
		case 1, 2:
			cl := ConnID(rapid.IntRange(1, 3).Draw(rt, "client"))
			nextSub[cl]++
			p := placed{cl, nextSub[cl]}
			f := match.MustParse(rapid.SampledFrom(propertyFilters).Draw(rt, "filter"))
			want[p] = true
			step(Subscribe{Conn: cl, Sub: p.sub, Filter: f.String()})
		case 3:
			a := ConnID(rapid.IntRange(10, 12).Draw(rt, "assistant"))
			answerAll(a, rapid.Bool().Draw(rt, "lie") && policy != poset.Trust)
		case 4:
			cl := ConnID(rapid.IntRange(1, 3).Draw(rt, "client"))
			if nextSub[cl] == 0 {
				continue
			}
			p := placed{cl, rapid.Uint64Range(1, nextSub[cl]).Draw(rt, "sub")}
			if !want[p] && !ready[p] {
				continue // already removed
			}
			delete(want, p)
			delete(ready, p)
			step(Unsubscribe{Conn: p.conn, Sub: p.sub})
		case 5:
			a := ConnID(rapid.IntRange(10, 12).Draw(rt, "assistant"))
			delete(offered, a)
			delete(queries, a)
			step(Detach{Conn: a})
		case 6:
			now = now.Add(time.Duration(rapid.IntRange(1, 150).Draw(rt, "ms")) * time.Millisecond)
			_, was := c.Deadline()
			c.Tick(now)
			carry()
			if _, still := c.Deadline(); was && !still {
				seen.timeouts++
			}
		}
	}
	// Answers stop; the clock passes every deadline.
	for range len(want) + 1 {
		now = now.Add(time.Second)
		c.Tick(now)
		carry()
	}
	if len(want) > 0 {
		rt.Fatalf("placed and never Ready: %v", fmt.Sprint(want))
	}
	if _, ok := c.Deadline(); ok {
		rt.Fatal("a deadline is pending with nothing to place")
	}
}
