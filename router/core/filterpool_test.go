package core

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

// TestFilterPoolCollision: a filter whose hash names another filter's
// slot (a 64-bit collision, forced here) gets a slot of its own holding
// itself, never the other filter, and both slots free exactly when their
// last references go; equal filters share a slot meanwhile.
func TestFilterPoolCollision(t *testing.T) {
	p := newFilterPool()
	f, g := match.MustParse(`x > 1`), match.MustParse(`y == "a"`)
	sg := p.intern(g)
	p.byHash[p.hash(f)] = sg // f's hash now names g's slot
	sf := p.intern(f)
	if sf == sg || !p.filter(sf).Equal(f) || !p.filter(sg).Equal(g) {
		t.Fatalf("collision: f in slot %d (%v), g in slot %d (%v)", sf, p.filter(sf), sg, p.filter(sg))
	}
	if s := p.intern(g); s != sg {
		t.Fatalf("g again in slot %d, want its shared slot %d", s, sg)
	}
	if p.len() != 2 {
		t.Fatalf("%d slots in use, want 2", p.len())
	}
	p.release(sf)
	if p.len() != 1 || p.byHash[p.hash(f)] != sg {
		t.Fatalf("after f's release: %d slots, f's hash names slot %d (want g's %d)", p.len(), p.byHash[p.hash(f)], sg)
	}
	p.release(sg)
	if p.len() != 1 || !p.filter(sg).Equal(g) {
		t.Fatal("g freed with a reference left")
	}
	p.release(sg)
	if p.len() != 0 {
		t.Fatalf("after every release: %d slots in use", p.len())
	}
}
