package core

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/mesh"
)

// TestPlaceBatch: a batch placed through the core puts every filter in
// the mesh's table and, with no link up, is Ready at once as one batch; a
// batch reusing a ref is refused and changes nothing; without a mesh the
// input is an error.
func TestPlaceBatch(t *testing.T) {
	m, err := mesh.New(mesh.Config{Name: "r", Table: "shallow"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Mesh: m})
	if err != nil {
		t.Fatal(err)
	}
	fs := []match.Filter{match.MustParse(`x > 1`), match.MustParse(`x > 2`), match.MustParse(`y == "a"`)}
	if err := c.Step(SubscribeBatch{Conn: 4, First: 10, Filters: fs}); err != nil {
		t.Fatal(err)
	}
	rd := c.Ready()
	c.Advance()
	if got, want := DescribeReady(rd), "frame conn=4: ack subscribe-batch id=10\n"; got != want {
		t.Fatalf("Ready:\n%swant the batch's one Ack to client 4:\n%s", got, want)
	}
	if m.Len() != 3 {
		t.Fatalf("table holds %d subscriptions, want 3", m.Len())
	}
	if err := c.Step(SubscribeBatch{Conn: 4, First: 12, Filters: fs}); err == nil {
		t.Fatal("a batch reusing ref 12 was accepted")
	}
	if c.HasReady() || m.Len() != 3 {
		t.Fatalf("refused batch changed something: table %d, ready %v", m.Len(), c.HasReady())
	}
	bare, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.Step(SubscribeBatch{Conn: 1, First: 1, Filters: fs}); err == nil {
		t.Fatal("SubscribeBatch without a mesh was accepted")
	}
}
