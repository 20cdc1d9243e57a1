package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sift-pubsub/sift/internal/wire"
	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/poset"
	"github.com/sift-pubsub/sift/router/mesh"
)

// epoch is the clock of a script's start; times print as offsets from it.
var epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// interactionEnv is the state of one interaction script: the core under
// test, its clock, and what its clients were sent (the queries they may
// answer).
type interactionEnv struct {
	t    *testing.T
	core *Core
	now  time.Time
	// queries are the RTO queries sent to each connection and not yet
	// answered, in the order sent.
	queries map[ConnID][]*wire.RTOQuery
	// attached are the client connections attached (a script's client is
	// attached when it first subscribes).
	attached map[ConnID]bool
	fixed    []match.Filter
	set      AssistSettings // the core's, for crash
	out      strings.Builder
	// lt is the link table of the link table commands.
	lt *LinkTable
	// routers are the linked routers of the mesh commands
	// (interaction_mesh_test.go), order their names in creation order.
	routers map[string]*meshRouter
	order   []string
}

func newInteractionEnv(t *testing.T) *interactionEnv {
	return &interactionEnv{t: t, now: epoch, queries: make(map[ConnID][]*wire.RTOQuery)}
}

// client attaches connection c, once.
func (e *interactionEnv) client(c ConnID) {
	if e.attached == nil {
		e.attached = map[ConnID]bool{}
	}
	if !e.attached[c] {
		e.attached[c] = true
		e.step(Attach{Conn: c})
	}
}

// step ticks the core with the env's clock (as router's driver does before
// each input), steps in and carries out the Readys.
func (e *interactionEnv) step(in Input) {
	e.core.Tick(e.now)
	if err := e.core.Step(in); err != nil {
		fmt.Fprintf(&e.out, "error: %v\n", err)
	}
	e.carry()
}

// carry renders and carries out every Ready: it records the queries sent.
func (e *interactionEnv) carry() {
	for e.core.HasReady() {
		rd := e.core.Ready()
		e.out.WriteString(DescribeReady(rd))
		for _, f := range rd.Frames {
			t, body, _, err := wire.SplitFrame(f.Data, wire.HardMaxFrame)
			if err != nil {
				e.t.Fatalf("core sent a bad frame: %v", err)
			}
			m, err := wire.Decode(t, body)
			if err != nil {
				e.t.Fatalf("core sent an undecodable %s: %v", t, err)
			}
			if q, ok := m.(*wire.RTOQuery); ok {
				e.queries[f.Conn] = append(e.queries[f.Conn], q)
			}
		}
		e.core.Advance()
	}
	if d, ok := e.core.Deadline(); ok {
		fmt.Fprintf(&e.out, "deadline +%s\n", d.Sub(epoch))
	}
}

// answer is an assistant's answer to q: honest (poset.Evaluate) or, if
// lie, every bit set.
func answer(t interface{ Fatal(...any) }, q *wire.RTOQuery, lie bool) *wire.RTOAnswer {
	n := len(q.Filters)
	var a poset.Answer
	if lie {
		a = poset.Answer{Up: poset.NewBits(n), Down: poset.NewBits(n), Overlap: poset.NewBits(n)}
		for i := range n {
			a.Up.Set(i)
			a.Down.Set(i)
			a.Overlap.Set(i)
		}
	} else {
		pq := poset.Query{Filters: make([]match.Filter, n)}
		var err error
		if pq.Filter, err = match.Parse(q.Filter); err != nil {
			t.Fatal(err)
		}
		for i, text := range q.Filters {
			if pq.Filters[i], err = match.Parse(text); err != nil {
				t.Fatal(err)
			}
		}
		a = poset.Evaluate(pq)
	}
	return &wire.RTOAnswer{Q: q.Q, Up: a.Up, Down: a.Down, Overlap: a.Overlap}
}

// newMeshCore returns a core over a fresh mesh of one router named name.
func newMeshCore(name string, set AssistSettings) (*Core, error) {
	m, err := mesh.New(mesh.Config{Name: name, MaxLinks: 4, Incarnation: 1})
	if err != nil {
		return nil, err
	}
	if err := m.Pin(set.Fixed); err != nil {
		return nil, err
	}
	return New(Config{Mesh: m, Assist: set, Engine: NewEngine(match.NewFast(match.FastConfig{}), 0)})
}
