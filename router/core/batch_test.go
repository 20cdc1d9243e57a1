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
	c := New(Config{Mesh: m})
	fs := []match.Filter{match.MustParse(`x > 1`), match.MustParse(`x > 2`), match.MustParse(`y == "a"`)}
	if err := c.Step(PlaceBatch{Conn: 4, First: 10, Filters: fs}); err != nil {
		t.Fatal(err)
	}
	rd := c.Ready()
	c.Advance()
	if len(rd.Mesh) != 1 || len(rd.Mesh[0].Ready) != 1 {
		t.Fatalf("Ready %+v, want one mesh output with one Ready", rd)
	}
	if r := rd.Mesh[0].Ready[0]; r != (mesh.Ready{Client: 4, Ref: 10, Batch: true}) {
		t.Fatalf("Ready %+v, want the batch from ref 10 of client 4", r)
	}
	if m.Len() != 3 {
		t.Fatalf("table holds %d subscriptions, want 3", m.Len())
	}
	if err := c.Step(PlaceBatch{Conn: 4, First: 12, Filters: fs}); err == nil {
		t.Fatal("a batch reusing ref 12 was accepted")
	}
	if c.HasReady() || m.Len() != 3 {
		t.Fatalf("refused batch changed something: table %d, ready %v", m.Len(), c.HasReady())
	}
	if err := New(Config{}).Step(PlaceBatch{Conn: 1, First: 1, Filters: fs}); err == nil {
		t.Fatal("PlaceBatch without a mesh was accepted")
	}
}
