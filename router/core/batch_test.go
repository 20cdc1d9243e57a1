package core

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// TestPlaceBatch: a batch placed through the core puts every filter in
// the engine and the mesh's table and, with no link up, is Ready at once
// as one batch (one Ack frame); a batch reusing a ref is refused with one
// Reply and changes nothing; without a mesh the engine's Reply acknowledges
// it at once.
func TestPlaceBatch(t *testing.T) {
	m, err := mesh.New(mesh.Config{Name: "r", Table: "shallow"})
	if err != nil {
		t.Fatal(err)
	}
	eng := NewEngine(match.NewFast(match.FastConfig{}), 0)
	c, err := New(Config{Mesh: m, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	step := func(c *Core, in Input) string {
		t.Helper()
		if err := c.Step(in); err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		out := DescribeReady(c.Ready()) // before Advance: the core reuses the Ready's slices
		c.Advance()
		return out
	}
	step(c, Attach{Conn: 4})
	fs := []match.Filter{match.MustParse(`x > 1`), match.MustParse(`x > 2`), match.MustParse(`y == "a"`)}
	if got, want := step(c, SubscribeBatch{Conn: 4, First: 10, Filters: fs}), "wanted [\"x\" \"y\"]\nmetric subscriptions 3\nframe conn=4: ack subscribe-batch id=10\n"; got != want {
		t.Fatalf("Ready:\n%swant the batch's one Ack to client 4:\n%s", got, want)
	}
	if m.Len() != 3 || eng.Subscriptions() != 3 {
		t.Fatalf("table holds %d subscriptions, the engine %d, want 3", m.Len(), eng.Subscriptions())
	}
	if got, want := step(c, SubscribeBatch{Conn: 4, First: 12, Filters: fs}), "reply conn=4 subscribe-batch id=12: duplicate-subscription: subscription id 12 (filter 0 of the batch) is already in use\n"; got != want {
		t.Fatalf("a batch reusing ref 12: Ready\n%swant\n%s", got, want)
	}
	if m.Len() != 3 || eng.Subscriptions() != 3 {
		t.Fatalf("refused batch changed something: table %d, engine %d", m.Len(), eng.Subscriptions())
	}
	bare, err := New(Config{Engine: NewEngine(match.NewFast(match.FastConfig{}), 0)})
	if err != nil {
		t.Fatal(err)
	}
	step(bare, Attach{Conn: 1})
	if got, want := step(bare, SubscribeBatch{Conn: 1, First: 1, Filters: fs}), "wanted [\"x\" \"y\"]\nreply conn=1 subscribe-batch id=1: ack\n"; got != want {
		t.Fatalf("without a mesh: Ready\n%swant\n%s", got, want)
	}
}
