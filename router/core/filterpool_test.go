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
	p.hashFn = func(match.Filter) uint64 { return 7 }
	f, g := match.MustParse(`x > 1`), match.MustParse(`y == "a"`)
	sg := p.intern(g)
	sf := p.intern(f) // f's hash names g's slot
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
	if s, ok := p.byHash.get(7, p.slots); p.len() != 1 || !ok || s != sg {
		t.Fatalf("after f's release: %d slots, f's hash names slot %d (want g's %d)", p.len(), s, sg)
	}
	p.release(sg)
	if p.len() != 1 || !p.filter(sg).Equal(g) {
		t.Fatal("g freed with a reference left")
	}
	p.release(sg)
	if p.len() != 0 || p.byHash.len() != 0 {
		t.Fatalf("after every release: %d slots in use, %d hashes", p.len(), p.byHash.len())
	}
}

// TestFilterPoolWitnessCollisions: with a hash that sends every filter to
// one value (as a neighbour forging witnesses could), equal filters still
// share one slot each, every slot of the hash is found, and releasing them
// in any order leaves no slot, hash or collision entry behind.
func TestFilterPoolWitnessCollisions(t *testing.T) {
	p := newFilterPool()
	p.hashFn = func(match.Filter) uint64 { return 7 }
	texts := []string{`x > 1`, `y == "a"`, `z prefix "q"`}
	slots := map[string]uint32{}
	for range 2 {
		for _, s := range texts {
			got := p.intern(match.MustParse(s))
			if was, ok := slots[s]; ok && was != got {
				t.Fatalf("%s interned again in slot %d, want its slot %d", s, got, was)
			}
			slots[s] = got
		}
	}
	if p.len() != len(texts) {
		t.Fatalf("%d slots in use, want %d", p.len(), len(texts))
	}
	var seen []uint32
	p.each(7, func(s uint32) bool { seen = append(seen, s); return true })
	if len(seen) != len(texts) {
		t.Fatalf("hash 7 names slots %v, want the %d of %v", seen, len(texts), slots)
	}
	for _, s := range []string{texts[1], texts[0], texts[2]} {
		for range 2 {
			if got, ok := p.find(7, match.MustParse(s)); !ok || got != slots[s] {
				t.Fatalf("find %s: slot %d (%v), want %d", s, got, ok, slots[s])
			}
			p.release(slots[s])
		}
	}
	if p.len() != 0 || p.byHash.len() != 0 || len(p.collided) != 0 {
		t.Fatalf("after every release: %d slots, %d hashes, %d collided", p.len(), p.byHash.len(), len(p.collided))
	}
}
